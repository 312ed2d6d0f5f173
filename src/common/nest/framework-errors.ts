import type { FastifyReply, FastifyRequest } from 'fastify';
import { toEnvelope } from '../errors/envelope';
import { ResilienceError } from '../errors/resilience-error';

/**
 * Fastify's answer to URLs its router cannot even read (a malformed percent-encoding, a path
 * segment over its length limit). These never reach Nest, and Fastify's own body quotes the
 * path; they get the envelope like every other failure.
 */
export function answerFrameworkError(error: { code?: string }, _request: FastifyRequest, reply: FastifyReply): void {
  const failure =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ResilienceError('invalid_request', 'a path segment is longer than the limit')
      : new ResilienceError('invalid_request', 'the URL is malformed');
  void reply.status(failure.status).type('application/json; charset=utf-8').send(toEnvelope(failure));
}
