import type { INestApplication } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../json-depth';
import { ResilienceError } from '../errors/resilience-error';

/** What Bulkhead calls of a Nest app on Express (`NestExpressApplication`), with no import of it. */
interface ExpressApp {
  useBodyParser(parser: 'json'): unknown;
  getHttpAdapter(): {
    getInstance(): { use(middleware: ExpressMiddleware): unknown };
    isMiddlewareApplied?(name: string): boolean;
  };
}

type ExpressMiddleware = (
  request: IncomingMessage & { body?: unknown },
  response: ServerResponse,
  next: (error?: unknown) => void,
) => void;

/**
 * Refuses, before any route runs, a JSON body nested deeper than {@link MAX_JSON_DEPTH}: no route
 * (a tool, a batch, the LLM route, a company's own) ever sees one. Recursive code after it
 * (canonical JSON, `JSON.stringify` of an echo) would overflow the stack, and would do so after a
 * lane slot, an idempotency claim or a breaker count had been taken (docs/pitfalls.md #19).
 * Checked on the parsed body, whichever parser made it: `JSON.parse` itself is not recursive, and
 * walking the parsed value costs a third or less of scanning the text (0.08x of the parse on a
 * 1 KB body). The refusal is a `400 invalid_request` in the envelope.
 *
 * Takes the Nest app (Fastify or Express), or the Fastify instance itself; call it before
 * `listen`. On Fastify it is a `preValidation` hook, whatever body parser made the body. On
 * Express it is a middleware right after the JSON body parser, which it registers then
 * (`useBodyParser('json')`) unless the app already did: Nest's own parsers are only added at
 * `listen`, after the routes' middleware would be.
 */
export function limitJsonDepth(target: FastifyInstance | INestApplication): void {
  if (isFastifyInstance(target)) return limitFastify(target);
  const adapter = target.getHttpAdapter();
  if (adapter.getType() === 'fastify') return limitFastify(adapter.getInstance() as FastifyInstance);
  if (adapter.getType() !== 'express') {
    throw new Error(`limitJsonDepth: Fastify or Express only; this app's HTTP adapter is '${adapter.getType()}'`);
  }
  const app = target as unknown as ExpressApp;
  if (!app.getHttpAdapter().isMiddlewareApplied?.('jsonParser')) app.useBodyParser('json');
  app.getHttpAdapter().getInstance().use(refuseDeepBody);
}

function isFastifyInstance(target: FastifyInstance | INestApplication): target is FastifyInstance {
  return typeof (target as Partial<FastifyInstance>).addHook === 'function';
}

function limitFastify(fastify: FastifyInstance): void {
  fastify.addHook('preValidation', (request, _reply, done) => {
    const { body } = request;
    if (body !== null && typeof body === 'object' && jsonDepthExceeds(body, MAX_JSON_DEPTH)) done(tooDeep());
    else done();
  });
}

/** Express: the error goes to Nest's exception layer, so the app's filter (the envelope) answers it. */
const refuseDeepBody: ExpressMiddleware = (request, _response, next) => {
  const { body } = request;
  if (body !== null && typeof body === 'object' && jsonDepthExceeds(body, MAX_JSON_DEPTH)) next(tooDeep());
  else next();
};

function tooDeep(): ResilienceError {
  return new ResilienceError('invalid_request', `request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
}
