import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { existingCallState } from './call-state';
import { retryAfterSeconds, toEnvelope } from '../errors/envelope';
import { fromHttpException } from './http-exception-mapping';
import { isResilienceError, ResilienceError } from '../errors/resilience-error';

/**
 * Turns every failure of every HTTP route into the error envelope: our ResilienceErrors,
 * Nest's and Fastify's own HttpExceptions (unknown route, malformed JSON, wrong content type,
 * body over the limit), a company's own HttpExceptions, and anything unexpected as `internal`.
 */
@Catch()
export class EnvelopeExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Bulkhead');

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const error = this.toResilienceError(exception);
    if (reply.sent || reply.raw.headersSent) return;
    const state = existingCallState(request);
    if (error.retryAfterMs !== undefined) reply.header('retry-after', retryAfterSeconds(error.retryAfterMs));
    void reply
      .status(error.status)
      .type('application/json; charset=utf-8')
      .send(toEnvelope(error, { callId: state?.callId, toolId: state?.toolId }));
  }

  private toResilienceError(exception: unknown): ResilienceError {
    if (exception instanceof ResilienceError) {
      // An unexpected error already wrapped on the call path (with the attempts made): log its cause.
      if (exception.kind === 'internal' && exception.cause !== undefined && !isResilienceError(exception.cause)) {
        this.logUnexpected(exception.cause);
      }
      return exception;
    }
    if (exception instanceof HttpException) return fromHttpException(exception);
    this.logUnexpected(exception);
    return new ResilienceError('internal', 'internal error');
  }

  /** Our own bug or a company handler's: log it here, tell the client nothing about it. */
  private logUnexpected(exception: unknown): void {
    this.logger.error(
      `unexpected ${describe(exception)} answered as internal`,
      exception instanceof Error ? exception.stack : undefined,
    );
  }
}

function describe(exception: unknown): string {
  return exception instanceof Error ? exception.constructor.name : typeof exception;
}
