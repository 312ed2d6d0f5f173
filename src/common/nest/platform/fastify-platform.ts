import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpPlatform } from './http-platform';

const JSON_TYPE = 'application/json; charset=utf-8';

// Nest hands the platform's own objects over typed as `unknown`-like; these casts are the only
// place where Bulkhead assumes Fastify's.
const request = (value: unknown) => value as FastifyRequest;
const reply = (value: unknown) => value as FastifyReply;

/** {@link HttpPlatform} on `@nestjs/platform-fastify`: a reply wraps the Node response as `raw`. */
export const FASTIFY_PLATFORM: HttpPlatform = {
  name: 'fastify',
  rawRequest: (value) => request(value).raw,
  rawResponse: (value) => reply(value).raw,
  url: (value) => request(value).url,
  clientAddress: (value) => request(value).ip,
  routePattern: (value) => request(value).routeOptions?.url,
  elapsedMs: (value) => reply(value).elapsedTime,
  setHeader(value, name, header) {
    void reply(value).header(name, header);
  },
  // Fastify's reply keeps a header set after a hijack or a send to itself, unsent, without a throw.
  headersOf: (value) => reply(value),
  isSent(value) {
    const fastifyReply = reply(value);
    return fastifyReply.sent || fastifyReply.raw.headersSent;
  },
  sendJson(value, status, body) {
    void reply(value).status(status).type(JSON_TYPE).send(body);
  },
  hijack(value) {
    const fastifyReply = reply(value);
    // The headers set on the reply so far are Fastify's until its own send; a hijacked reply is
    // never sent by Fastify, so they move onto the Node response now.
    const raw = fastifyReply.raw;
    for (const [name, header] of Object.entries(fastifyReply.getHeaders())) {
      if (header !== undefined) raw.setHeader(name, header);
    }
    fastifyReply.hijack();
    return raw;
  },
};
