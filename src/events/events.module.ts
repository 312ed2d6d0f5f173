import { Global, Module } from '@nestjs/common';
import { CLOCK, type Clock } from '../common';
import { AdminGuard, CommonModule } from '../common/nest';
import { CallOutcomes } from './call-outcomes.service';
import { EventLedger } from './event-ledger';
import { EventsAdminController, EventsController } from './events.controller';

/** How many recent call outcomes `GET /v1/events` can show. */
export const EVENT_LEDGER_CAPACITY = 1000;

/**
 * The event ledger and the call outcomes every call path reports to (metrics and the ledger
 * listen). One per app, whichever modules import it.
 */
@Global()
@Module({
  imports: [CommonModule],
  providers: [
    {
      provide: EventLedger,
      useFactory: (clock: Clock) => new EventLedger(EVENT_LEDGER_CAPACITY, clock),
      inject: [CLOCK],
    },
    CallOutcomes,
  ],
  exports: [EventLedger, CallOutcomes],
})
export class EventsModule {}

/**
 * `GET /v1/events`, what the caller's tenant may see of the recent events, and
 * `GET /v1/admin/events`, all of them (404 unless an admin token is configured through AuthModule).
 */
@Module({ imports: [EventsModule], controllers: [EventsController, EventsAdminController], providers: [AdminGuard] })
export class EventsRoutesModule {}
