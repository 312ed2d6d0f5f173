import type { HttpException } from '@nestjs/common';
import type { ErrorKind } from '../errors/error-kinds';
import { ResilienceError } from '../errors/resilience-error';

const KIND_BY_STATUS: Record<number, ErrorKind> = {
  400: 'invalid_request',
  401: 'unauthorized',
  402: 'budget_exceeded',
  404: 'not_found',
  413: 'invalid_request',
  422: 'schema',
  429: 'rate_limited',
  502: 'transient',
  503: 'unavailable',
  504: 'timeout',
};

/** Fixed texts for what Fastify refuses before any handler runs; its own texts may quote the request. */
const FRAMEWORK_TEXT: Record<number, string> = {
  400: 'request body is not valid JSON',
  413: 'request body is larger than the limit',
  415: 'content-type must be application/json',
};

/** Nest's answer to an unknown route quotes the path: "Cannot GET /x". */
const UNKNOWN_ROUTE = /^Cannot [A-Z]+ /;

/**
 * Maps an HttpException (thrown by Nest, by Fastify's body parsing, or by a company's
 * controller) to a contract kind. A controller's own message is kept, as its author wrote it
 * for clients; the framework's are replaced. The contract gives `invalid_request` 400, except
 * 413 for an over-limit body; other 4xx statuses a controller chose are kept.
 */
export function fromHttpException(exception: HttpException): ResilienceError {
  const status = exception.getStatus();
  if (isFastifyError(exception.cause)) {
    const kind = KIND_BY_STATUS[status] ?? 'invalid_request';
    const message = FRAMEWORK_TEXT[status] ?? 'invalid request';
    return new ResilienceError(kind, message, { status: status === 413 ? 413 : undefined });
  }
  if (status === 404 && UNKNOWN_ROUTE.test(exception.message)) {
    return new ResilienceError('not_found', 'no such route');
  }
  if (status >= 500) {
    const kind = KIND_BY_STATUS[status] ?? 'internal';
    return new ResilienceError(kind, messageOf(exception, 'internal error'));
  }
  return new ResilienceError(KIND_BY_STATUS[status] ?? 'invalid_request', messageOf(exception, 'invalid request'), {
    status,
  });
}

function isFastifyError(cause: unknown): boolean {
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('FST_');
}

function messageOf(exception: HttpException, fallback: string): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message) && message.every((item) => typeof item === 'string')) return message.join('; ');
  return fallback;
}
