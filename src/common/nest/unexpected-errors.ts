import type { LoggerService } from '@nestjs/common';
import { isResilienceError, type ResilienceError } from '../errors/resilience-error';

/**
 * Logs a failure that is a bug (ours or a company handler's) with its stack: an `internal`
 * error wrapping something that is not a ResilienceError. Clients are told nothing of it.
 */
export function logIfUnexpected(logger: LoggerService, failure: ResilienceError): void {
  const cause = failure.cause;
  if (failure.kind !== 'internal' || cause === undefined || isResilienceError(cause)) return;
  const name = cause instanceof Error ? cause.constructor.name : typeof cause;
  logger.error(`unexpected ${name} answered as internal`, cause instanceof Error ? cause.stack : undefined);
}
