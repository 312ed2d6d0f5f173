import { type FullBreakerSettings, maxResetTimeoutMs } from './breaker-settings';

/**
 * How long a breaker stays open when it opens next: `resetTimeoutMs`, multiplied by
 * `backoffMultiplier` on each failed probe up to the maximum, and `resetTimeoutMs` again once the
 * circuit closes. A dependency that keeps failing its probes is probed less and less often,
 * without a fixed long open time keeping a quickly restarted one refused.
 */
export class OpenTime {
  private currentMs: number;
  private readonly maxMs: number;

  constructor(private readonly settings: Readonly<FullBreakerSettings>) {
    this.currentMs = settings.resetTimeoutMs;
    this.maxMs = maxResetTimeoutMs(settings);
  }

  /** The open time now, in milliseconds. */
  get ms(): number {
    return this.currentMs;
  }

  /** A probe failed: the opening it causes lasts longer. Returns the new open time. */
  grow(): number {
    this.currentMs = Math.min(this.currentMs * this.settings.backoffMultiplier, this.maxMs);
    return this.currentMs;
  }

  /** The circuit closed: the next opening lasts `resetTimeoutMs`. Returns it. */
  reset(): number {
    this.currentMs = this.settings.resetTimeoutMs;
    return this.currentMs;
  }
}
