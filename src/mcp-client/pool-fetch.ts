import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Abortable } from '../bulkhead';
import { noop } from '../common';
import type { AbortableRequestOptions, HttpMethod, HttpPool } from '../containment';
import type { RoutedCall } from './call-routing.transport';
import { eventStreamAnswer } from './event-stream-answer';
import { toWebResponse } from './web-response';

/**
 * How long the listening stream (GET) may stay quiet before it is cut; the SDK then opens it
 * again. A pool's own timeout (30 s by default) would cut a quiet one twice a minute.
 */
export const LISTEN_IDLE_MS = 600_000;

export interface PoolFetchOptions {
  /** The pool of the session: its permits, its sockets, its egress rules. */
  pool: HttpPool;
  /**
   * Whether the session keeps the server's event stream (GET) open for its notifications. It
   * holds one of the pool's permits while open, so only one session per server does; the
   * others are told here, without a request, that the server offers none (405).
   */
  listen: boolean;
  /** The most one answer of the session's own requests (initialize, tools/list) may take; a call's has its own. */
  maxResponseBytes: number;
  /** The call a POST body belongs to, if it is a `tools/call`'s. */
  callOf: (body: string | undefined) => RoutedCall | undefined;
  /** Hands the client a message the upstream sent on a call's answer before its result. */
  deliver: (message: unknown) => void;
}

/**
 * The `fetch` of an upstream session's SDK transport: every request goes through a Bulkhead
 * pool, with its egress rules and permits, never a global client. A `tools/call`'s request goes
 * through the call's own pool request, stopped with its attempt, with its call id, and its
 * answer bounded by the tool's `maxResponseBytes` (an event stream read here: see
 * {@link eventStreamAnswer}); the session's own requests stop when the session closes.
 */
export function poolFetch({ pool, listen, maxResponseBytes, callOf, deliver }: PoolFetchOptions): FetchLike {
  return async (url, init = {}) => {
    const method = (init.method ?? 'GET') as HttpMethod;
    const href = typeof url === 'string' ? url : url.href;
    const body = bodyOf(init.body);
    const request: AbortableRequestOptions = { method, headers: headersOf(init.headers), body };
    const routed = method === 'POST' ? callOf(body) : undefined;
    // Once its attempt is over, the call's pool request would be refused: what follows (the
    // SDK's notifications/cancelled) goes the session's way.
    if (routed && !routed.call.signal.aborted) {
      const { call, id } = routed;
      request.headers!['x-call-id'] = call.callId;
      request.timeoutMs = call.timeoutMs;
      const answer = await call.stream(href, request);
      if (answer.statusCode === 200 && isEventStream(answer.headers['content-type'])) {
        return eventStreamAnswer(answer, id, call.maxResponseBytes, deliver);
      }
      return toWebResponse(answer, call.maxResponseBytes);
    }
    if (method === 'GET') {
      if (!listen) return new Response(null, { status: 405 });
      request.timeoutMs = LISTEN_IDLE_MS;
    }
    const answer = await pool.streamAbortable(href, request, abortableOf(init.signal ?? undefined));
    return toWebResponse(answer, method === 'GET' ? undefined : maxResponseBytes);
  };
}

function isEventStream(contentType: string | undefined): boolean {
  return contentType !== undefined && /^\s*text\/event-stream\s*(;|$)/i.test(contentType);
}

function headersOf(init: RequestInit['headers']): Record<string, string> {
  const headers: Record<string, string> = {};
  new Headers(init).forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

/** The SDK sends JSON text, or nothing. */
function bodyOf(body: RequestInit['body']): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  throw new TypeError('an MCP transport request body must be text');
}

/** The session's AbortSignal as the pool's permits and requests take it. */
function abortableOf(signal: AbortSignal | undefined): Abortable {
  return {
    get aborted() {
      return signal?.aborted ?? false;
    },
    get reason() {
      return signal?.reason as unknown;
    },
    onAbort(listener) {
      if (!signal) return noop;
      const onAbort = () => listener(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      return () => signal.removeEventListener('abort', onAbort);
    },
    // The session owns its signal; the pool never aborts it.
    abort() {},
  };
}
