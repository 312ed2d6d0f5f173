import type { Clock } from '../common';

/** How many retries a dependency (a tool, an LLM route's target) may spend in a rolling window. */
export interface RetryBudgetSettings {
  /** Retries allowed as a share of the calls in the window. @default 20 */
  percent: number;
  /** Retries always allowed per window, however few the calls. @default 3 */
  minRetries: number;
  /** @default 10000 */
  windowMs: number;
}

/** Envoy's retry budget defaults: 20 %, at least 3; Finagle's 10 s window. */
export const DEFAULT_RETRY_BUDGET: Readonly<RetryBudgetSettings> = Object.freeze({
  percent: 20,
  minRetries: 3,
  windowMs: 10_000,
});

/** A budget's settings: the defaults, with whatever `overrides` sets (an absent or undefined field keeps its default). */
export function retryBudgetSettings(overrides?: Partial<RetryBudgetSettings>): RetryBudgetSettings {
  return {
    percent: overrides?.percent ?? DEFAULT_RETRY_BUDGET.percent,
    minRetries: overrides?.minRetries ?? DEFAULT_RETRY_BUDGET.minRetries,
    windowMs: overrides?.windowMs ?? DEFAULT_RETRY_BUDGET.windowMs,
  };
}

const BUCKETS = 10;

/**
 * A tool's retry budget: retries in the last `windowMs` may be at most `percent` of the calls
 * in it, or `minRetries`, whichever is more. When a dependency fails every call, its load
 * grows by at most that share instead of by `maxAttempts` times. The window moves on the
 * injected clock in ten buckets, lazily, when the budget is used.
 */
export class RetryBudget {
  private readonly bucketMs: number;
  private readonly calls = new Array<number>(BUCKETS).fill(0);
  private readonly retries = new Array<number>(BUCKETS).fill(0);
  private callTotal = 0;
  private retryTotal = 0;
  /** The bucket the counts currently go to, as a count of bucketMs since time 0. */
  private bucket: number;

  constructor(
    readonly settings: Readonly<RetryBudgetSettings>,
    private readonly clock: Clock,
  ) {
    const { percent, minRetries, windowMs } = settings;
    if (!(percent >= 0 && percent <= 100)) throw new RangeError('percent must be from 0 to 100');
    if (!(Number.isSafeInteger(minRetries) && minRetries >= 0)) {
      throw new RangeError('minRetries must be an integer of at least 0');
    }
    if (!(windowMs >= BUCKETS && Number.isFinite(windowMs)))
      throw new RangeError(`windowMs must be at least ${BUCKETS}`);
    this.bucketMs = windowMs / BUCKETS;
    this.bucket = Math.floor(clock.now() / this.bucketMs);
  }

  /** Counts a call: its first attempt is about to start. */
  recordCall(): void {
    this.advance();
    this.calls[this.bucket % BUCKETS]++;
    this.callTotal++;
  }

  /** Takes one retry from the budget if there is one left; false when it is spent. */
  tryRetry(): boolean {
    this.advance();
    const allowed = Math.max(this.settings.minRetries, (this.callTotal * this.settings.percent) / 100);
    if (this.retryTotal + 1 > allowed) return false;
    this.retries[this.bucket % BUCKETS]++;
    this.retryTotal++;
    return true;
  }

  /** Calls and retries in the current window. */
  window(): { calls: number; retries: number } {
    this.advance();
    return { calls: this.callTotal, retries: this.retryTotal };
  }

  /** Empties the buckets the clock has passed since the budget was last used. */
  private advance(): void {
    const current = Math.floor(this.clock.now() / this.bucketMs);
    const passed = Math.min(current - this.bucket, BUCKETS);
    for (let i = 1; i <= passed; i++) {
      const slot = (this.bucket + i) % BUCKETS;
      this.callTotal -= this.calls[slot]!;
      this.retryTotal -= this.retries[slot]!;
      this.calls[slot] = 0;
      this.retries[slot] = 0;
    }
    if (current > this.bucket) this.bucket = current;
  }
}
