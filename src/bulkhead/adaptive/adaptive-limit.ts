import type { LimitAlgorithm } from './adaptive-settings';

/**
 * A concurrency limit that moves with what finished calls show of the dependency. Every sample
 * is O(1) and allocates nothing: it runs as each call of an adaptive lane ends.
 */
export interface AdaptiveLimit {
  readonly algorithm: LimitAlgorithm;
  readonly min: number;
  readonly max: number;
  /** Calls that may run at once now: an integer from {@link min} to {@link max}. */
  readonly limit: number;
  /**
   * One call ended. `rttMs`: how long it held its slot; `inFlight`: calls running when it
   * started, itself included; `dropped`: it timed out, a sign of overload whatever its time.
   */
  onSample(rttMs: number, inFlight: number, dropped: boolean): void;
}

/** The least latency a sample counts with: a call timed at 0 (a coarse or virtual clock) must not divide by zero. */
export const MIN_RTT_MS = 0.001;

/** `value` held within [min, max]. */
export function clamp(value: number, min: number, max: number): number {
  return value < min ? min : value > max ? max : value;
}

/**
 * Whether a sample may raise the limit: calls that ran well below it say nothing of what more
 * would do (the lane was not the bottleneck), so a limit grows only once half of it was in use.
 */
export function usedEnough(inFlight: number, limit: number): boolean {
  return inFlight * 2 >= limit;
}
