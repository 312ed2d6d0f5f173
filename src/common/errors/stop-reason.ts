import { isResilienceError, ResilienceError } from './resilience-error';

/** Calls are aborted with ResilienceErrors (client gone, shutdown); any other reason reads as `stopped`. */
export function stopReason(reason: unknown): ResilienceError {
  return isResilienceError(reason) ? reason : new ResilienceError('stopped', 'the call was stopped');
}
