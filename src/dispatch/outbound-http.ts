import type { IncomingHttpHeaders } from 'node:http';

export interface OutboundRequest {
  method: 'POST' | 'PUT' | 'PATCH';
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  /** A 2xx body longer than this fails the call instead of filling memory. */
  maxResponseBytes: number;
}

export interface OutboundResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The body of a 2xx answer; other answers' bodies are discarded unread, never passed on. */
  body: Buffer | undefined;
}

/**
 * The one way tools reach the network. The service provides it with an undici Agent; the
 * containment module swaps in the normal and isolated pools. Tools never use `fetch` or a
 * global client (PITFALLS.md 11).
 */
export abstract class OutboundHttp {
  abstract request(url: string, request: OutboundRequest): Promise<OutboundResponse>;
}
