import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpPlatform } from './http-platform';

/** What Bulkhead reads of Express's request, which extends Node's (express is no dependency of ours). */
interface ExpressRequest extends IncomingMessage {
  /** The URL as sent: `url` is rewritten under a mounted router, this one never is. */
  readonly originalUrl?: string;
  /** The client's address, after Express's `trust proxy` setting. */
  readonly ip?: string;
  /** The matched route, once routing reached it. */
  readonly route?: { readonly path?: unknown };
}

/** What Bulkhead calls of Express's response, which extends Node's. */
interface ExpressResponse extends ServerResponse {
  status(code: number): this;
  json(body: unknown): this;
}

const request = (value: unknown) => value as ExpressRequest;
const response = (value: unknown) => value as ExpressResponse;

/**
 * {@link HttpPlatform} on `@nestjs/platform-express`: the request and the response are Node's own,
 * extended. Express keeps no start time, so a refusal's log line has no duration there.
 */
export const EXPRESS_PLATFORM: HttpPlatform = {
  name: 'express',
  rawRequest: (value) => request(value),
  rawResponse: (value) => response(value),
  url: (value) => request(value).originalUrl ?? request(value).url ?? '/',
  clientAddress: (value) => request(value).ip ?? request(value).socket?.remoteAddress,
  routePattern(value) {
    const path = request(value).route?.path;
    return typeof path === 'string' ? path : undefined;
  },
  elapsedMs: () => undefined,
  setHeader(value, name, header) {
    response(value).setHeader(name, header);
  },
  headersOf(value) {
    const express = response(value);
    return {
      header(name: string, header: string) {
        // Node throws on a header set once the head is out; Fastify's reply keeps it unsent.
        if (!express.headersSent) express.setHeader(name, header);
      },
    };
  },
  isSent: (value) => response(value).headersSent,
  sendJson(value, status, body) {
    const express = response(value);
    // `json` would keep a content type set before; ours is always JSON in UTF-8.
    express.setHeader('content-type', 'application/json; charset=utf-8');
    express.status(status).json(body);
  },
  // Express sends nothing on its own after a handler that took `@Res()`: the response is already raw.
  hijack: (value) => response(value),
};
