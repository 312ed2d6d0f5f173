import { isResilienceError } from '../common';

// How the breaker reads the end of an attempt: a counted failure, `stopped` (neither a success
// nor a failure), or anything else (the dependency answered).

/** What a company route throws when its dependency failed: Nest's HttpException 502, 503, 504. */
const DEPENDENCY_STATUSES = new Set([502, 503, 504]);

/**
 * Only a dependency's own failures count against it: a ResilienceError `transient` or
 * `timeout`, or (from a company's route) an HttpException 502, 503 or 504.
 */
export function countsAgainstBreaker(error: unknown): boolean {
  if (isResilienceError(error)) return error.kind === 'transient' || error.kind === 'timeout';
  const getStatus = (error as { getStatus?: unknown } | null)?.getStatus;
  return typeof getStatus === 'function' && DEPENDENCY_STATUSES.has(getStatus.call(error) as number);
}

/**
 * An attempt stopped before it could tell anything of the dependency (its caller left, a hedge
 * answered first, shutdown): a ResilienceError `stopped`. Neither a success nor a failure.
 */
export function isStopped(error: unknown): boolean {
  return isResilienceError(error) && error.kind === 'stopped';
}

/** How an attempt ended, as the breaker reads it once its promise settled. */
export type Ending = 'succeeded' | 'failed' | 'answered' | 'stopped';

/** How an attempt that was rejected with `error` ended. */
export function endingOf(error: unknown): Ending {
  if (isStopped(error)) return 'stopped';
  return countsAgainstBreaker(error) ? 'failed' : 'answered';
}

/** The attempt's timeout passed: a ResilienceError `timeout`. */
export function isTimeout(error: unknown): boolean {
  return isResilienceError(error) && error.kind === 'timeout';
}
