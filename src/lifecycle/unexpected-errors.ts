import { Injectable, Logger } from '@nestjs/common';
import { Listeners, logRecord } from '../common';
import { describeUnexpected, type UnexpectedErrorWhere } from './unexpected-error';

/** Every occurrence is logged up to this many of one kind; past it, one in {@link LOG_EVERY}. */
const LOG_ALL_UP_TO = 100;
const LOG_EVERY = 1_000;

/**
 * Errors nobody handled, as the process safety net reports them: each is logged without its
 * payload (see {@link describeUnexpected}) and told to listeners (the metrics collector counts
 * them). A flood of the same bug is logged sparsely past the first hundred, with the count so
 * far; the counter has every one.
 */
@Injectable()
export class UnexpectedErrors {
  private readonly logger = new Logger('Bulkhead');
  private readonly listeners = new Listeners<[UnexpectedErrorWhere]>();
  private readonly counts: Record<UnexpectedErrorWhere, number> = { unhandled_rejection: 0, uncaught_exception: 0 };

  /** Calls `listener` with where each one surfaced; returns the function that removes it. */
  onUnexpected(listener: (where: UnexpectedErrorWhere) => void): () => void {
    return this.listeners.add(listener);
  }

  /** How many were reported from `where` so far. */
  count(where: UnexpectedErrorWhere): number {
    return this.counts[where];
  }

  report(where: UnexpectedErrorWhere, error: unknown): void {
    const count = ++this.counts[where];
    if (count <= LOG_ALL_UP_TO || count % LOG_EVERY === 0) {
      const description = describeUnexpected(error);
      this.logger.error(
        logRecord({
          msg: `${where === 'uncaught_exception' ? 'uncaught exception' : 'unhandled rejection'} (${description.errorName})`,
          event: 'unexpected_error',
          where,
          count,
          ...description,
        }),
      );
    }
    this.listeners.emit(where);
  }
}
