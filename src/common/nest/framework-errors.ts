import type { FastifyReply, FastifyRequest } from 'fastify';
import { isOpenAiPath, toEnvelope } from '../errors/envelope';
import { ResilienceError } from '../errors/resilience-error';

/**
 * Fastify's answer to URLs its router cannot even read (a malformed percent-encoding, a path
 * segment over its length limit) and to a route constraint that failed. These never reach
 * Nest, and Fastify's own body quotes the path; they get the envelope like every other failure.
 */
export function answerFrameworkError(error: { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
  const failure = frameworkFailure(error.code);
  if (reply.sent || reply.raw.headersSent) return;
  void reply
    .status(failure.status)
    .type('application/json; charset=utf-8')
    .send(toEnvelope(failure, { openai: isOpenAiPath(request.url) }));
}

function frameworkFailure(code: string | undefined): ResilienceError {
  switch (code) {
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ResilienceError('invalid_request', 'a path segment is longer than the limit');
    // An asynchronous route constraint threw: our failure, not the client's URL.
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new ResilienceError('internal', 'internal error');
    default:
      return new ResilienceError('invalid_request', 'the URL is malformed');
  }
}
