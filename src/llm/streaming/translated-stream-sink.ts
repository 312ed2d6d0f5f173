import type { ResilienceError } from '../../common';
import type { ChatChunk, ChatChunkChoice, ChatUsage } from '../chat.types';
import type { ChatStreamSink } from './chat-stream-sink';
import type { SseReply } from './sse-reply';

/**
 * A streamed answer in another API's events than Chat Completions' chunks (Anthropic's
 * Messages, OpenAI's Responses): each chunk the pipeline streams is translated as it comes, the
 * first one opening the stream's own start events, and the end closing it with events that need
 * the usage and the `bulkhead` field the chunks carried. Framing and the connection are the
 * SseReply's.
 */
export abstract class TranslatedStreamSink implements ChatStreamSink {
  private started = false;
  /** The usage chunk's, for the closing events. */
  protected usage: ChatUsage | undefined;
  /** What the usage chunk says of how the answer was served, for the closing events. */
  protected bulkhead: unknown;

  constructor(protected readonly sse: SseReply) {}

  get opened(): boolean {
    return this.sse.opened;
  }

  open(headers: Record<string, string>): void {
    this.sse.open(headers);
  }

  write(event: object): Promise<void> | undefined {
    const chunk = event as ChatChunk;
    const starting = this.start(chunk);
    if (chunk.usage) this.usage = chunk.usage;
    if (chunk.bulkhead !== undefined) this.bulkhead = chunk.bulkhead;
    return this.translateChunk(chunk) ?? starting;
  }

  end(): void {
    // Every stream has chunks; should one have none, its client still gets a whole answer.
    this.start(undefined);
    this.sse.finish(this.closingEvents());
  }

  destroy(): void {
    this.sse.destroy();
  }

  abstract fail(error: ResilienceError): void;

  /** The stream's start events, from its first chunk (none: the stream had no chunk at all). */
  protected abstract begin(first: ChatChunk | undefined): Promise<void> | undefined;

  /** One chunk as this API's events: its first choice's, by default; the last write's backpressure. */
  protected translateChunk(chunk: ChatChunk): Promise<void> | undefined {
    const choice = chunk.choices[0];
    return choice && this.translate(choice);
  }

  /** One choice's delta (and finish) as this API's events; the last write's backpressure. */
  protected abstract translate(choice: ChatChunkChoice): Promise<void> | undefined;

  /** The events that end a whole answer, framed. */
  protected abstract closingEvents(): string;

  private start(first: ChatChunk | undefined): Promise<void> | undefined {
    if (this.started) return undefined;
    this.started = true;
    return this.begin(first);
  }
}
