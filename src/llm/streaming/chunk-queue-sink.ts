import { type Deferred, deferred, type ResilienceError } from '../../common';
import type { ChatChunk } from '../chat.types';
import type { ChatStreamSink } from './chat-stream-sink';

/**
 * A streamed answer handed to code in the same process, chunk by chunk: the consumer's
 * {@link next} takes what the pipeline wrote, and a write waits until it is taken, so a slow
 * consumer holds the provider back as a slow HTTP client does (nothing is read ahead).
 */
export class ChunkQueueSink implements ChatStreamSink {
  opened = false;
  private readonly waiting: ChatChunk[] = [];
  /** Resolved when the consumer takes the last chunk written. */
  private taken: Deferred<void> | undefined;
  /** Resolved when something arrives for a consumer that waits. */
  private arrived: Deferred<void> | undefined;
  private ended = false;
  private failure: ResilienceError | undefined;
  private gone = false;

  open(): void {
    this.opened = true;
  }

  write(event: object): Promise<void> | undefined {
    if (this.gone) return undefined;
    this.waiting.push(event as ChatChunk);
    this.wake();
    this.taken ??= deferred<void>();
    return this.taken.promise;
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(error: ResilienceError): void {
    this.failure = error;
    this.ended = true;
    this.wake();
  }

  /** The consumer stopped reading: writes are dropped and the writer is let go. */
  destroy(): void {
    this.gone = true;
    this.waiting.length = 0;
    this.release();
  }

  /** The next chunk, or undefined at the end; throws the failure that ended the stream. */
  async next(): Promise<ChatChunk | undefined> {
    for (;;) {
      const chunk = this.waiting.shift();
      if (chunk) {
        if (this.waiting.length === 0) this.release();
        return chunk;
      }
      if (this.failure) throw this.failure;
      if (this.ended || this.gone) return undefined;
      this.arrived = deferred<void>();
      await this.arrived.promise;
    }
  }

  private wake(): void {
    const arrived = this.arrived;
    this.arrived = undefined;
    arrived?.resolve();
  }

  private release(): void {
    const taken = this.taken;
    this.taken = undefined;
    taken?.resolve();
  }
}
