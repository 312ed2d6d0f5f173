import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

/** The HTTP platforms Bulkhead's routes, guards, interceptor and filter run on. */
export type PlatformName = 'fastify' | 'express';

/**
 * A request as either platform hands it over (`@Req()`, `switchToHttp().getRequest()`): a
 * `FastifyRequest` or an Express `Request`. Both carry Node's header object, so headers are read
 * directly; everything else goes through the {@link HttpPlatform}.
 */
export interface PlatformRequest {
  readonly headers: IncomingHttpHeaders;
}

/** A reply as either platform hands it over (`@Res()`): a `FastifyReply` or an Express `Response`. */
export type PlatformReply = object;

/** Where a call's own headers go as it runs (the rate limit's, `x-bulkhead-*`): the reply's, by name. */
export interface ReplyHeaders {
  header(name: string, value: string): unknown;
}

/**
 * What Bulkhead does with a request or a reply, written once per platform (docs/embedding.md,
 * "Express or Fastify"). The mechanisms never see either platform: only the Nest adapters (the
 * filter, the guards, the interceptor, the controllers) call this. The client leaving is watched
 * on the Node response ({@link rawResponse}), the same on both (docs/pitfalls.md #5).
 */
export interface HttpPlatform {
  readonly name: PlatformName;
  /** The Node request under the platform's own. */
  rawRequest(request: PlatformRequest): IncomingMessage;
  /** The Node response under the platform's reply. */
  rawResponse(reply: PlatformReply): ServerResponse;
  /** The URL as the client sent it: path and query, whatever router mounted the route. */
  url(request: PlatformRequest): string;
  /** The client's address as the platform found it (its own proxy-trust setting applied). */
  clientAddress(request: PlatformRequest): string | undefined;
  /** The pattern of the route that matched (`/v1/tools/:toolId/invoke`); undefined when none did. */
  routePattern(request: PlatformRequest): string | undefined;
  /** Milliseconds since the request arrived, where the platform keeps that; undefined otherwise. */
  elapsedMs(reply: PlatformReply): number | undefined;
  /** Sets (replaces) a response header; before the response is sent. */
  setHeader(reply: PlatformReply, name: string, value: string | number | readonly string[]): void;
  /**
   * The reply's headers for code that sets them while the call runs, before or after its answer
   * went out (a failure reported on a stream already open): set while the head is unsent, and
   * silently left out after, on both platforms (Fastify's reply keeps them unsent; Node's
   * response would throw). No allocation on Fastify: its reply is one.
   */
  headersOf(reply: PlatformReply): ReplyHeaders;
  /** Whether the reply can take no status or header any more: sent, or its head written. */
  isSent(reply: PlatformReply): boolean;
  /** Answers with a status and a JSON body (`application/json; charset=utf-8`). */
  sendJson(reply: PlatformReply, status: number, body: unknown): void;
  /**
   * Takes the response from the platform for raw writes (an event stream): from then on only the
   * caller writes to it, and the platform sends nothing after the handler returns. The headers
   * set so far through {@link setHeader} are on the returned response (`getHeaders()`).
   */
  hijack(reply: PlatformReply): ServerResponse;
}
