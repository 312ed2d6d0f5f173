import type { ServerResponse } from 'node:http';
import { type ResilienceError, toEnvelope } from '../../common';
import type { HttpPlatform, PlatformReply } from '../../common/nest';
import type { ChatStreamSink } from './chat-stream-sink';

/**
 * A streamed answer written as Server-Sent Events on the Node response under the platform's
 * reply, in the framing OpenAI's SDKs read (`data: <json>\n\n`, `data: [DONE]\n\n`). The reply
 * is taken from the platform (hijacked) at {@link open}: from then on only this writes to it.
 * The headers already set on the reply (the call id, the rate limits) go out with the status line.
 *
 * Backpressure is the socket's: a write the kernel could not take returns a promise that
 * resolves on `drain`, so a slow client holds the stream back instead of growing a buffer here.
 */
export class SseReply implements ChatStreamSink {
  opened = false;
  /** The wait for `drain` every write shares until it comes: one pair of listeners, not one per event. */
  private draining: Promise<void> | undefined;

  /** The Node response: watched for a client that left before {@link open}, written to after. */
  private readonly raw: ServerResponse;

  constructor(
    private readonly platform: HttpPlatform,
    private readonly reply: PlatformReply,
    /** The envelope's labels for an error event. */
    private readonly labels: { callId?: string },
  ) {
    this.raw = platform.rawResponse(reply);
  }

  open(headers: Record<string, string>): void {
    this.opened = true;
    // The headers set on the reply so far are on the Node response once hijacked; these join them.
    this.platform.hijack(this.reply).writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      // Proxies such as nginx would otherwise hold the events back to fill a buffer.
      'x-accel-buffering': 'no',
    });
  }

  write(event: object): Promise<void> | undefined {
    return this.send(`data: ${JSON.stringify(event)}\n\n`);
  }

  writeFramed(text: string): Promise<void> | undefined {
    const waiting = this.send(text);
    // Node's response corks its socket at a write until the next tick, to gather the writes of
    // one tick. This text is a whole read of the provider's already, and the code that runs
    // next (the rest of that read, other streams' reads) may hold the tick for a while: it goes
    // out now. The cork's own uncork then finds nothing to do.
    this.raw.socket?.uncork();
    return waiting;
  }

  end(): void {
    this.finish('data: [DONE]\n\n');
  }

  fail(error: ResilienceError): void {
    this.finish(`data: ${JSON.stringify(toEnvelope(error, { ...this.labels, openai: true }))}\n\n`);
  }

  /** One named event (`event: <name>`), as Anthropic's streams frame theirs. */
  writeNamed(name: string, data: object): Promise<void> | undefined {
    return this.send(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Ends the response with `text`, its last events (already framed). */
  finish(text: string): void {
    if (!this.clientGone) this.raw.end(text);
  }

  /** Whether the response takes no more: its client left, or it ended. */
  protected get clientGone(): boolean {
    return this.raw.destroyed || this.raw.writableEnded;
  }

  destroy(): void {
    this.raw.destroy();
  }

  private send(text: string): Promise<void> | undefined {
    if (this.clientGone) return undefined;
    const { raw } = this;
    if (raw.write(text)) return undefined;
    return (this.draining ??= new Promise((resolve) => {
      const done = () => {
        raw.off('drain', done);
        raw.off('close', done);
        this.draining = undefined;
        resolve();
      };
      raw.on('drain', done);
      raw.on('close', done);
    }));
  }
}
