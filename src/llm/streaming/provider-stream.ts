import { type Clock, type LazyAbortController, ResilienceError } from '../../common';
import type { ChatChunk } from '../chat.types';
import { carriesContent, StreamAssembly } from './stream-assembly';

/**
 * One provider's streamed answer as the route reads it: one chunk at a time, each within a
 * wait the reader gives, every chunk added to the {@link assembly}. Nothing is read ahead: a
 * reader that waits (a slow client) leaves the rest with the provider, held back by TCP.
 *
 * {@link stop} cancels the provider's request at once (the attempt's abort destroys its
 * connection) and a read in progress fails with the reason; {@link settled} resolves once the
 * provider's stream has really ended, however it ended.
 */
export class ProviderStream {
  readonly assembly = new StreamAssembly();
  /** Set once a chunk carried content: the commit point has passed. */
  committed = false;
  readonly settled: Promise<void>;
  private readonly iterator: AsyncIterator<ChatChunk>;
  private reading = false;
  private finished = false;
  private markSettled!: () => void;

  constructor(
    chunks: AsyncIterable<ChatChunk>,
    private readonly clock: Clock,
    private readonly abort: LazyAbortController,
    private readonly label: string,
  ) {
    this.iterator = chunks[Symbol.asyncIterator]();
    this.settled = new Promise((resolve) => (this.markSettled = resolve));
  }

  /**
   * The next chunk, or undefined once the answer is complete. Fails with the provider's error,
   * with `timeout` when none came within `waitMs` (the request is then cancelled), or with the
   * stop reason.
   */
  next(waitMs?: number): Promise<ChatChunk | undefined> {
    if (this.abort.aborted) return Promise.reject(this.abort.reason);
    if (this.finished) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      let done = false;
      const finish = () => {
        done = true;
        this.reading = false;
        if (timer !== undefined) this.clock.clearTimer(timer);
        detach();
      };
      const detach = this.abort.onAbort((reason) => {
        if (done) return;
        finish();
        reject(reason);
      });
      const timer =
        waitMs === undefined
          ? undefined
          : this.clock.setTimer(() => {
              if (done) return;
              finish();
              const error = new ResilienceError('timeout', `target ${this.label} sent nothing for ${waitMs} ms`);
              this.stop(error);
              reject(error);
            }, waitMs);
      this.reading = true;
      this.iterator.next().then(
        (result) => {
          if (result.done) this.end();
          if (done) return;
          finish();
          if (result.done) return resolve(undefined);
          const chunk = result.value;
          this.assembly.add(chunk);
          if (!this.committed && carriesContent(chunk)) this.committed = true;
          resolve(chunk);
        },
        (error: unknown) => {
          this.end();
          if (done) return;
          finish();
          reject(this.abort.aborted ? this.abort.reason : error);
        },
      );
    });
  }

  /** Cancels the provider's request now; a read in progress fails with `reason`. */
  stop(reason: ResilienceError): void {
    if (!this.abort.aborted) this.abort.abort(reason);
    // A stream paused between chunks is not reading: ending the iteration runs its clean-up
    // (the connection destroyed) now. One that is reading ends when the abort reaches it.
    if (!this.reading && !this.finished) {
      const returned = this.iterator.return?.();
      if (returned)
        returned.then(
          () => this.end(),
          () => this.end(),
        );
      else this.end();
    }
  }

  private end(): void {
    if (this.finished) return;
    this.finished = true;
    this.markSettled();
  }
}
