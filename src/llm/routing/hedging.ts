import type { Breaker } from '../../circuit-breaker';
import type { Clock } from '../../common';

/** Hedges a route may start back to back before the 10 % share limits it. */
const HEDGE_BURST = 2;
/** Requests that earn one hedge: a share of 10 %, over time. */
const REQUESTS_PER_HEDGE = 10;
/** How long a target that answered 429 or 529 without a Retry-After takes no hedges. */
const THROTTLED_MS = 5_000;

/**
 * The cap on a route's hedges beyond `maxHedges` per request: at most 10 % of its requests,
 * after a burst of two (a token bucket filled by one tenth of a token per request), so a
 * target slow for everyone cannot double the route's load.
 */
export class HedgeAllowance {
  // Counted in tenths of a hedge, whole numbers: ten additions of 0.1 make 0.9999999999999999, not 1.
  private tenths = HEDGE_BURST * REQUESTS_PER_HEDGE;

  /** A request came: a tenth of a hedge more is allowed. */
  requested(): void {
    this.tenths = Math.min(HEDGE_BURST * REQUESTS_PER_HEDGE, this.tenths + 1);
  }

  /** Gives back a hedge taken and not started (the budget could not hold it). */
  giveBack(): void {
    this.tenths = Math.min(HEDGE_BURST * REQUESTS_PER_HEDGE, this.tenths + REQUESTS_PER_HEDGE);
  }

  /** Takes one hedge, or says no. */
  take(): boolean {
    if (this.tenths < REQUESTS_PER_HEDGE) return false;
    this.tenths -= REQUESTS_PER_HEDGE;
    return true;
  }
}

/** When a target last said it was overloaded or rate limited, so hedges keep off it for a while. */
export class TargetHealth {
  private throttledUntil = 0;

  throttled(clock: Clock, retryAfterMs: number | undefined): void {
    this.throttledUntil = Math.max(this.throttledUntil, clock.now() + (retryAfterMs ?? THROTTLED_MS));
  }

  /** A hedge may go to it: its breaker closed (not half open) and no recent 429/529. */
  hedgeable(clock: Clock, breaker: Breaker, tenant?: string): boolean {
    return clock.now() >= this.throttledUntil && breaker.state === 'closed' && !breaker.refusal(tenant);
  }
}
