import { type Clock, type LazyAbortController, ResilienceError, type TimerHandle } from '../../common';
import type { ChunkBatch } from './chunk-batch';
import { carriesContent, StreamAssembly } from './stream-assembly';

/** The read in progress: who waits for it, and since when. */
interface PendingRead {
  resolve(batch: ChunkBatch | undefined): void;
  reject(reason: unknown): void;
  since: number;
  waitMs: number | undefined;
}

/**
 * One provider's streamed answer as the route reads it: a batch of chunks (what one read of the
 * provider's body held) at a time, each within a wait the reader gives, every chunk added to the
 * {@link assembly}. Nothing is read ahead: a reader that waits (a slow client) leaves the rest
 * with the provider, held back by TCP.
 *
 * {@link stop} cancels the provider's request at once (the attempt's abort destroys its
 * connection) and a read in progress fails with the reason; {@link settled} resolves once the
 * provider's stream has really ended, however it ended.
 *
 * One abort listener and at most one timer for the whole stream, not one of each per read: the
 * timer, once due, looks at how long the read in progress has waited, and is set again for the
 * rest of its wait if it has not waited long enough.
 */
export class ProviderStream {
  readonly assembly: StreamAssembly;
  /** Set once a chunk carried content: the commit point has passed. */
  committed = false;
  readonly settled: Promise<void>;
  private readonly iterator: AsyncIterator<ChunkBatch>;
  private pending: PendingRead | undefined;
  private finished = false;
  private markSettled!: () => void;
  private readonly detachAbort: () => void;
  private timer: TimerHandle | undefined;
  /** When {@link timer} is due, on the clock. */
  private timerDue = 0;

  constructor(
    batches: AsyncIterable<ChunkBatch>,
    private readonly clock: Clock,
    private readonly abort: LazyAbortController,
    private readonly label: string,
    /** The failure of a batch the assembly could not take: the target's malformed answer. */
    private readonly unreadable: () => ResilienceError,
    /** The most characters the answer may hold ({@link StreamAssembly}); unbounded when left out. */
    maxCharacters?: number,
  ) {
    this.assembly = new StreamAssembly(maxCharacters);
    this.iterator = batches[Symbol.asyncIterator]();
    this.settled = new Promise((resolve) => (this.markSettled = resolve));
    this.detachAbort = abort.onAbort((reason) => this.failRead(reason));
  }

  /**
   * The next batch, or undefined once the answer is complete. Fails with the provider's error,
   * with `timeout` when none came within `waitMs` (the request is then cancelled), or with the
   * stop reason.
   */
  next(waitMs?: number): Promise<ChunkBatch | undefined> {
    if (this.abort.aborted) return Promise.reject(this.abort.reason);
    if (this.finished) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const since = this.clock.now();
      this.pending = { resolve, reject, since, waitMs };
      if (waitMs !== undefined) this.waitUntil(since + waitMs);
      this.iterator.next().then(this.onBatch, this.onFailure);
    });
  }

  /** Cancels the provider's request now; a read in progress fails with `reason`. */
  stop(reason: ResilienceError): void {
    if (!this.abort.aborted) this.abort.abort(reason);
    // A stream paused between chunks is not reading: ending the iteration runs its clean-up
    // (the connection destroyed) now. One that is reading ends when the abort reaches it.
    if (this.pending === undefined && !this.finished) {
      const returned = this.iterator.return?.();
      if (returned)
        returned.then(
          () => this.end(),
          () => this.end(),
        );
      else this.end();
    }
  }

  private readonly onBatch = (result: IteratorResult<ChunkBatch>): void => {
    if (result.done) this.end();
    const read = this.pending;
    // The read already failed (timed out, stopped): what came is nobody's.
    if (read === undefined) return;
    this.pending = undefined;
    if (result.done) return read.resolve(undefined);
    const batch = result.value;
    try {
      for (const chunk of batch.chunks) {
        this.assembly.add(chunk);
        if (!this.committed && carriesContent(chunk)) this.committed = true;
      }
    } catch {
      // The readers check every chunk before it gets here; this is for what they did not
      // foresee. A throw in this callback would be a rejection nobody handles, which ends the
      // process: it costs this stream its answer instead, and the provider's request is cancelled.
      const error = this.unreadable();
      read.reject(error);
      this.stop(error);
      return;
    }
    read.resolve(batch);
  };

  private readonly onFailure = (error: unknown): void => {
    this.end();
    const read = this.pending;
    if (read === undefined) return;
    this.pending = undefined;
    read.reject(this.abort.aborted ? this.abort.reason : error);
  };

  private failRead(reason: unknown): void {
    const read = this.pending;
    if (read === undefined) return;
    this.pending = undefined;
    read.reject(reason);
  }

  /** Makes sure the timer is due by `due`; a later one is set again. */
  private waitUntil(due: number): void {
    if (this.timer !== undefined) {
      if (this.timerDue <= due) return;
      this.clock.clearTimer(this.timer);
    }
    this.timerDue = due;
    this.timer = this.clock.setTimer(this.onTimer, due - this.clock.now());
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    const read = this.pending;
    if (read === undefined || read.waitMs === undefined || this.finished) return;
    const due = read.since + read.waitMs;
    if (this.clock.now() < due) return this.waitUntil(due);
    const error = new ResilienceError('timeout', `target ${this.label} sent nothing for ${read.waitMs} ms`);
    this.failRead(error);
    this.stop(error);
  };

  private end(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.detachAbort();
    this.markSettled();
  }
}
