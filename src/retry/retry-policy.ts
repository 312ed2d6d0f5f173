import { ERROR_KINDS, type ErrorKind, type Random, type ResilienceError } from '../common';
import type { RetryContext } from './retry-context';

/** How a tool's failed attempts are retried; every duration in milliseconds. */
export interface RetrySettings {
  /** Attempts in all, the first included; 1 means no retries. @default 3 */
  maxAttempts: number;
  /** The backoff before the first retry is drawn from [0, baseDelayMs). @default 100 */
  baseDelayMs: number;
  /** No backoff is drawn above this (an upstream's Retry-After may ask for more). @default 2000 */
  maxDelayMs: number;
  /**
   * The most all attempts and waits of one call may take, from its first attempt; a retry
   * starts only if its whole attempt timeout fits before it.
   * @default maxAttempts × timeoutMs + (maxAttempts − 1) × maxDelayMs, the policy's own worst case
   */
  deadlineMs: number;
}

/**
 * The defaults. Three attempts ride out a blip without tripling the load of a dependency
 * that is really down (the retry budget caps that too); 100 ms doubling to at most 2 s is
 * long enough for a restarted connection and short next to an agent's patience.
 */
export const DEFAULT_RETRY = Object.freeze({ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 2_000 });

/**
 * Which failures are retried and how long to wait first: full-jitter exponential backoff
 * (AWS's "Exponential Backoff and Jitter"), at least an upstream's Retry-After.
 */
export class RetryPolicy implements RetrySettings {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly deadlineMs: number;

  constructor(settings: RetrySettings) {
    const { maxAttempts, baseDelayMs, maxDelayMs, deadlineMs } = settings;
    if (!(Number.isSafeInteger(maxAttempts) && maxAttempts >= 1)) {
      throw new RangeError('maxAttempts must be an integer of at least 1');
    }
    if (!(baseDelayMs >= 0 && Number.isFinite(baseDelayMs))) throw new RangeError('baseDelayMs must be at least 0');
    if (!(maxDelayMs >= baseDelayMs && Number.isFinite(maxDelayMs))) {
      throw new RangeError('maxDelayMs must be at least baseDelayMs');
    }
    if (!(deadlineMs > 0 && Number.isFinite(deadlineMs))) throw new RangeError('deadlineMs must be positive');
    this.maxAttempts = maxAttempts;
    this.baseDelayMs = baseDelayMs;
    this.maxDelayMs = maxDelayMs;
    this.deadlineMs = deadlineMs;
  }

  /**
   * The one retry decision of both loops (a tool call's attempts, an LLM request's attempts on
   * one target), after `failure`: the wait before the retry; undefined when it is not retried;
   * or the breaker's refusal when the circuit opened meanwhile (its Retry-After says more than
   * the failure does). In order: attempts left, the kind by the error table (`timeout` only if
   * `idempotent`, never a failure that says it is not `retryable`), the backoff, whether the wait
   * and `attemptMs` fit before the deadline (no retry starts at or after it), the breaker, and
   * last the retry budget, so it is spent only on a retry that will happen.
   */
  decide(failure: ResilienceError, context: RetryContext): number | ResilienceError | undefined {
    const { attempts } = context;
    if (attempts === 0 || attempts >= this.maxAttempts) return undefined;
    if (!this.retries(failure.kind, context.idempotent, failure.retryable)) return undefined;
    const waitMs = this.backoffMs(attempts, context.random, failure.retryAfterMs);
    const startAt = context.clock.now() + waitMs;
    if (startAt + context.attemptMs > context.deadlineAt || startAt >= context.deadlineAt) return undefined;
    const refusal = context.breakerRefusal();
    if (refusal) return refusal;
    if (context.budget && !context.budget.tryRetry()) return undefined;
    return waitMs;
  }

  /**
   * Whether a failure of this kind may be retried: `transient` always, `timeout` only if
   * idempotent; never one that says it is not `retryable` (a ResilienceError's own flag).
   */
  retries(kind: ErrorKind, idempotent: boolean, retryable = true): boolean {
    if (!retryable) return false;
    const rule = ERROR_KINDS[kind].retry;
    return rule === 'always' || (rule === 'idempotent_only' && idempotent);
  }

  /**
   * The wait before retry number `retry` (1 for the first): uniform in
   * [0, min(maxDelayMs, baseDelayMs × 2^(retry − 1))), and never less than `retryAfterMs`.
   */
  backoffMs(retry: number, random: Random, retryAfterMs = 0): number {
    const ceiling = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** Math.min(retry - 1, 52));
    return Math.max(Math.floor(random() * ceiling), retryAfterMs);
  }
}
