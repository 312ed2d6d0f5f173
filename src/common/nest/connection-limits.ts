import type { Server, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { answerClientError } from './client-errors';

/** How long a client may take to send, and how many connections are served at once (`server.*`). */
export interface ConnectionLimits {
  /** A request's line, headers and body must all arrive within this many ms of its first byte. */
  requestTimeoutMs: number;
  /** The longest a connection may stay silent while the server waits on its client. */
  connectionTimeoutMs: number;
  /** Connections open at once; past it a new one is closed as it arrives. */
  maxConnections: number;
}

/**
 * How often Node looks for requests past `requestTimeoutMs`: a tenth of it, at most every second,
 * so a request that stalls is answered 408 within 10 % (at most 1 s) of its timeout. Node's own
 * 30 s would let a 30 s timeout run to a minute.
 */
export function requestCheckIntervalMs(requestTimeoutMs: number): number {
  return Math.min(1_000, Math.ceil(requestTimeoutMs / 10));
}

/**
 * The Fastify server options for the limits. Fastify's 0 for either timeout would also turn off
 * Node's own (300 s for a request): a client that sent its headers and part of a body held its
 * connection for as long as it liked, before any key was asked for (the body is read first).
 * `requestTimeout` goes to Node's constructor too, so its headers timeout is min(60 s, it).
 */
export function connectionServerOptions(limits: ConnectionLimits): {
  requestTimeout: number;
  connectionTimeout: number;
  http: Pick<ServerOptions, 'requestTimeout' | 'connectionsCheckingInterval'>;
} {
  return {
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.connectionTimeoutMs,
    http: {
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: requestCheckIntervalMs(limits.requestTimeoutMs),
    },
  };
}

/**
 * Applies what the options cannot: `maxConnections`, and what a silent connection means. Node
 * destroys a socket silent for `connectionTimeout` whatever it is doing, which would cut a call
 * that waits in its lane's queue or on a slow dependency without a byte to send. Here a silent
 * connection is closed only while the server waits on its client: for the rest of a request (then
 * with the contract's 408), with no request at all (keep-alive, whose own timeout governs), or
 * for it to read an answer already written. An answer still being made is bounded by its call's
 * own limits (queue wait, deadline, a stream's `idleTimeoutMs`), never by this.
 */
export function limitConnections(server: Server, limits: ConnectionLimits): void {
  server.maxConnections = limits.maxConnections;
  server.on('timeout', closeWhenClientIsSilent);
}

function closeWhenClientIsSilent(socket: Socket): void {
  const response = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!response) {
    socket.destroy();
    return;
  }
  if (!response.req.complete) {
    answerClientError(Object.assign(new Error('request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
    return;
  }
  if (response.writableEnded) socket.destroy();
}
