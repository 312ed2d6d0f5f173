import { Logger } from '@nestjs/common';
import { type Clock, logRecord } from '../common';

/** How long past the drain time the process waits for the server to close before it leaves anyway. */
export const EXIT_GRACE_MS = 5_000;

export interface ProcessShutdownOptions {
  /** The drain's time (`server.shutdownDrainMs`); the process leaves at most {@link EXIT_GRACE_MS} after it. */
  drainMs: number;
  clock: Clock;
  /** @default process.exit */
  exit?: (code: number) => void;
}

/** Why the process stops: a signal, or an error nobody handled. */
export type ShutdownCause = { signal: NodeJS.Signals } | { unexpected: 'uncaught_exception' | 'unhandled_rejection' };

/**
 * The one way the process ends once it serves: `app.close()` (the drain of
 * src/lifecycle/lifecycle.service.ts runs before the server closes), then exit. A signal exits 0
 * when the close succeeds; an error nobody handled exits 1 whatever the close did, so the
 * orchestrator sees a failure. Only the first cause counts: a SIGTERM during a drain an error
 * started does not start a second one.
 */
export class ProcessShutdown {
  private readonly logger = new Logger('Bulkhead');
  private started = false;

  constructor(
    private readonly app: { close(): Promise<void> },
    private readonly options: ProcessShutdownOptions,
  ) {}

  get stopping(): boolean {
    return this.started;
  }

  stop(cause: ShutdownCause): void {
    if (this.started) return;
    this.started = true;
    const exit = this.options.exit ?? ((code: number) => process.exit(code));
    const failed = 'unexpected' in cause;
    this.logger.log(
      logRecord(
        failed
          ? { msg: `shutting down after an ${cause.unexpected.replace('_', ' ')}`, event: 'shutdown', ...cause }
          : { msg: `${cause.signal} received`, event: 'shutdown', signal: cause.signal },
      ),
    );
    // If a handler ignores its abort and keeps the server from closing, leave anyway.
    this.options.clock.setTimer(() => exit(1), this.options.drainMs + EXIT_GRACE_MS, { unref: true });
    this.app.close().then(
      () => exit(failed ? 1 : 0),
      (error: unknown) => {
        this.logger.error(logRecord({ msg: `shutdown failed (${(error as Error)?.name})`, event: 'shutdown' }));
        exit(1);
      },
    );
  }
}
