import { Module } from '@nestjs/common';
import { EventsModule } from '../events';
import { CallLogSubscriber } from './call-log.subscriber';

/**
 * One log line per finished call, through Nest's `Logger` (the app's logger, whichever it is).
 * The service's JSON logger itself is not here: `createServiceLogger` is for the app's `main`.
 */
@Module({
  imports: [EventsModule],
  providers: [CallLogSubscriber],
})
export class LoggingModule {}
