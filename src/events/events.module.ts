import { Global, Module } from '@nestjs/common';
import { CLOCK, type Clock } from '../common';
import { CallOutcomes } from './call-outcomes.service';
import { EventLedger } from './event-ledger';
import { EventsController } from './events.controller';

/** How many recent call outcomes `GET /v1/events` can show. */
export const EVENT_LEDGER_CAPACITY = 1000;

@Global()
@Module({
  controllers: [EventsController],
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
