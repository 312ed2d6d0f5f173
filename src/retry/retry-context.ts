import type { Clock, Random, ResilienceError } from '../common';
import type { RetryBudget } from './retry-budget';

/**
 * What {@link RetryPolicy.decide} needs of the call it decides for, after a failed attempt: a
 * tool call's, or an LLM request's on one target. The loop keeps one object per call (made at
 * its first failure) and updates `attempts` before each decision: nothing is allocated per
 * attempt.
 */
export interface RetryContext {
  /** Attempts made on this dependency, the failed one included; 0 when none ran (an open circuit refused it). */
  readonly attempts: number;
  /** Whether the work may run twice: a `timeout` is retried only then (the error table's column). */
  readonly idempotent: boolean;
  /** The clock time by which every attempt and wait must have ended: the call's deadline. */
  readonly deadlineAt: number;
  /**
   * The time a retry's attempt needs before the deadline, in ms: no retry starts unless its wait
   * and this fit. 0 for a loop that bounds each attempt by what is left (the LLM route's).
   */
  readonly attemptMs: number;
  readonly clock: Clock;
  /** For the backoff's full jitter. */
  readonly random: Random;
  /** The dependency's retry budget, spent last, only on a retry that will happen; none: unbounded. */
  readonly budget: RetryBudget | undefined;
  /** The dependency's breaker: its refusal when the circuit opened meanwhile, else undefined. */
  breakerRefusal(): ResilienceError | undefined;
}
