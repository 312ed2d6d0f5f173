import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { CallOutcomes } from '../events';
import { CallLog } from './call-log';

/**
 * Writes each finished call's line (tool calls, LLM requests, `@Bulkhead` routes) through Nest's
 * `Logger`, so it follows whatever logger the app installed: the service's pino one, or a host
 * app's own. Which levels are written is asked once, when the app starts (a logger installed with
 * `app.useLogger` before `listen` is seen); a logger that cannot tell (neither a ConsoleLogger
 * nor given levels) counts as writing every level, and gets a line it may drop.
 */
@Injectable()
export class CallLogSubscriber implements OnApplicationBootstrap, OnApplicationShutdown {
  private dispose: (() => void) | undefined;

  constructor(private readonly outcomes: CallOutcomes) {}

  onApplicationBootstrap(): void {
    const log = new CallLog(new Logger('Bulkhead'), {
      debug: Logger.isLevelEnabled('debug'),
      log: Logger.isLevelEnabled('log'),
      warn: Logger.isLevelEnabled('warn'),
    });
    const listener = log.listener();
    if (listener) this.dispose = this.outcomes.onOutcome(listener);
  }

  /** Not on module destroy: calls that finish during the drain, after it, still get their line. */
  onApplicationShutdown(): void {
    this.dispose?.();
    this.dispose = undefined;
  }
}
