/**
 * Failures and successes of the last `windowMs`, in `buckets` equal buckets. It moves on
 * lazily: each use first drops the buckets the clock has passed since the last one, so it
 * needs no timer, and recording an outcome is O(1) and allocates nothing.
 */
export class RollingWindow {
  private readonly failuresIn: number[];
  private readonly successesIn: number[];
  private readonly bucketMs: number;
  /** The bucket outcomes go into now. */
  private current = 0;
  private currentStartedAt: number;
  private failureTotal = 0;
  private successTotal = 0;

  constructor(
    readonly windowMs: number,
    readonly buckets: number,
    now: number,
  ) {
    this.bucketMs = windowMs / buckets;
    this.failuresIn = new Array<number>(buckets).fill(0);
    this.successesIn = new Array<number>(buckets).fill(0);
    this.currentStartedAt = now;
  }

  get failures(): number {
    return this.failureTotal;
  }

  get successes(): number {
    return this.successTotal;
  }

  /** Outcomes in the window: failures and successes. */
  get volume(): number {
    return this.failureTotal + this.successTotal;
  }

  /** Drops what is older than the window at `now`; a clock that stepped back drops nothing. */
  advance(now: number): void {
    const due = Math.floor((now - this.currentStartedAt) / this.bucketMs);
    if (due <= 0) return;
    this.currentStartedAt += due * this.bucketMs;
    for (let step = Math.min(due, this.buckets); step > 0; step--) {
      this.current = (this.current + 1) % this.buckets;
      this.failureTotal -= this.failuresIn[this.current];
      this.successTotal -= this.successesIn[this.current];
      this.failuresIn[this.current] = 0;
      this.successesIn[this.current] = 0;
    }
  }

  recordFailure(now: number): void {
    this.advance(now);
    this.failuresIn[this.current]++;
    this.failureTotal++;
  }

  recordSuccess(now: number): void {
    this.advance(now);
    this.successesIn[this.current]++;
    this.successTotal++;
  }

  /** Empties the window; it counts afresh from `now`. */
  clear(now: number): void {
    this.failuresIn.fill(0);
    this.successesIn.fill(0);
    this.failureTotal = 0;
    this.successTotal = 0;
    this.currentStartedAt = now;
  }
}
