import type { ServerResponse } from 'node:http';
import { DEFAULT_SSE_KEEP_ALIVE_MS } from '@modelcontextprotocol/sdk/server/sseKeepAlive.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Clock, TimerHandle } from '../common';

/**
 * The answer to one POSTed request, written as the SDK's Streamable HTTP transport writes it
 * (and `writeWebResponse` hands it on): with event streams, the head at once, then each message
 * as an `event: message`, a `: keepalive` comment every 15 s of the clock while it waits, and
 * the end after the response; with JSON, one body holding the response. The headers are the
 * SDK's, by the names and in the order a Web `Response` gives them.
 */
export class DirectAnswer {
  private ended = false;
  private keepAlive: TimerHandle | undefined;
  private headFlush: NodeJS.Immediate | undefined;

  constructor(
    private readonly raw: ServerResponse,
    private readonly sessionId: string,
    private readonly streamed: boolean,
    private readonly clock: Clock,
  ) {
    if (!streamed) return;
    raw.writeHead(200, {
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'content-type': 'text/event-stream',
      'mcp-session-id': sessionId,
      'x-accel-buffering': 'no',
    });
    // Node sends a head with the first body byte: a quick call's head leaves with its answer, in
    // one write; a slow call's goes at the next turn of the event loop, not with the first
    // keep-alive 15 s later.
    this.headFlush = setImmediate(() => {
      this.headFlush = undefined;
      if (!this.ended && !raw.destroyed) raw.flushHeaders();
    });
    this.armKeepAlive();
  }

  /** A message before the response (a progress notification); a JSON answer has no room for it. */
  notify(message: JSONRPCMessage): void {
    if (this.streamed && !this.ended) this.write(eventOf(message));
  }

  /** The response: the last event of the stream, or the JSON body. */
  respond(message: JSONRPCMessage): void {
    if (!this.end()) return;
    if (!this.streamed) {
      const headers = { 'content-type': 'application/json', 'mcp-session-id': this.sessionId };
      if (!this.raw.destroyed) this.raw.writeHead(200, headers).end(JSON.stringify(message));
      return;
    }
    // The head went out with `writeHead`, so the last event is still a chunk, as the SDK's are.
    if (!this.raw.destroyed) this.raw.end(eventOf(message));
  }

  /**
   * The answer of a request that was cancelled, whose response will never come: its stream ends
   * without one, or its JSON answer is `202` without a body.
   */
  endCancelled(): void {
    if (!this.end()) return;
    if (!this.streamed && !this.raw.destroyed) this.raw.writeHead(202, {});
    this.finish();
  }

  /** Marks the answer ended; false when it already was. */
  private end(): boolean {
    if (this.ended) return false;
    this.ended = true;
    if (this.keepAlive !== undefined) this.clock.clearTimer(this.keepAlive);
    this.keepAlive = undefined;
    if (this.headFlush !== undefined) clearImmediate(this.headFlush);
    this.headFlush = undefined;
    return true;
  }

  private armKeepAlive(): void {
    this.keepAlive = this.clock.setTimer(
      () => {
        this.keepAlive = undefined;
        // A client that left hears nothing more; the answer still ends with its call.
        if (this.raw.destroyed) return;
        this.write(': keepalive\n\n');
        this.armKeepAlive();
      },
      DEFAULT_SSE_KEEP_ALIVE_MS,
      { unref: true },
    );
  }

  /** Writes at the client's pace is the socket's business: the events are small, and few. */
  private write(text: string): void {
    if (!this.raw.destroyed) this.raw.write(text);
  }

  private finish(): void {
    if (!this.raw.destroyed) this.raw.end();
  }
}

function eventOf(message: JSONRPCMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}
