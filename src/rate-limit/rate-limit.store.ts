import type { Awaitable } from '../common';

/** One token bucket of a key: it holds `perMinute` and refills continuously at perMinute / 60 s. */
export interface BucketRule {
  /** `rpm` or `tpm`: the bucket's name within its key, and its RateLimit-Policy name. */
  name: string;
  perMinute: number;
}

/** What a bucket holds after a decision. */
export interface BucketState {
  name: string;
  /** Whole units left now (never below 0 in what is reported). */
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** When refused: milliseconds until every asked amount fits (0 when allowed). */
  retryAfterMs: number;
  /** Each rule's bucket after the decision, in the order of the rules. */
  buckets: BucketState[];
}

/**
 * Token buckets per key (a tenant), as whole decisions so that Redis answers each with one
 * script. Time is the store's own (Redis `TIME`; the injected clock in memory). The memory
 * store answers at once, the Redis store with a promise.
 */
export interface RateLimitStore {
  /**
   * Takes `amounts[i]` from bucket `rules[i]` of `key`, all or none: a refused call takes
   * nothing from any bucket. An amount larger than a bucket's whole capacity is refused with
   * the time a full bucket would need.
   */
  take(key: string, rules: readonly BucketRule[], amounts: readonly number[]): Awaitable<RateLimitDecision>;
  /**
   * Settles an earlier take: adds `amounts[i]` back to bucket `rules[i]` (a negative amount
   * takes more, and may leave the bucket below zero, so later calls wait for the overage).
   * Never refuses; a bucket never holds more than its capacity.
   */
  adjust(key: string, rules: readonly BucketRule[], amounts: readonly number[]): Awaitable<void>;
}

/** Injection token of the {@link RateLimitStore}. */
export const RateLimitStore = Symbol('RateLimitStore');
