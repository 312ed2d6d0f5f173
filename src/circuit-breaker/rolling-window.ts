import type { Clock } from '../common';

/**
 * The rolling window of one breaker: failures and successes of the last `windowMs`, in
 * `buckets` equal buckets, and how many of them were slow. Its engine counts outcomes into it
 * and reads it to decide to open on failures; the breaker reads it to open on slow calls
 * ({@link slow}), and for its snapshot.
 *
 * It differs from opossum's own Status in three ways, each on purpose (the engine hands it to
 * opossum in that shape: opossum-engine.ts):
 * - It moves on lazily, on the injected clock: each use first drops the buckets the clock has
 *   passed, so there is no interval, and tests move it with their clock.
 * - It counts only what the breaker needs, when an attempt ends: no latency per call (opossum's
 *   Status keeps one for every outcome until its bucket is dropped, even with percentiles
 *   off), no fires, rejects or cache counts; recording is O(1) and allocates nothing, and the
 *   totals are kept as it goes, so reading them costs the same whatever the buckets hold.
 * - Its attempts are those that ended (failures + successes), not those started: attempts still
 *   in flight have no outcome to dilute the share with, nor to count; nor have attempts that
 *   were stopped.
 *
 * It is emptied when the circuit closes ({@link clear}): a circuit that closed starts counting
 * afresh.
 */
export class RollingWindow {
  private readonly failuresIn: number[];
  private readonly successesIn: number[];
  /** Slow attempts, counted besides their outcome (a slow success is in `successesIn` too). */
  private readonly slowIn: number[];
  private readonly bucketMs: number;
  /** The bucket outcomes go into now. */
  private current = 0;
  private currentStartedAt: number;
  private failureTotal = 0;
  private successTotal = 0;
  private slowTotal = 0;
  /**
   * The bucket outcomes go into now, counted from the first and never reset: what the
   * per-tenant windows align their own buckets with. A clear moves it a whole window on, so
   * every bucket counted before is out of the window.
   */
  private bucketSerial = 0;

  constructor(
    private readonly clock: Clock,
    readonly windowMs: number,
    readonly buckets: number,
  ) {
    this.bucketMs = windowMs / buckets;
    this.failuresIn = new Array<number>(buckets).fill(0);
    this.successesIn = new Array<number>(buckets).fill(0);
    this.slowIn = new Array<number>(buckets).fill(0);
    this.currentStartedAt = clock.now();
  }

  /** Failures in the window as of the last outcome or {@link moveOn}. */
  get failures(): number {
    return this.failureTotal;
  }

  /** Successes in the window as of the last outcome or {@link moveOn}. */
  get successes(): number {
    return this.successTotal;
  }

  /** Slow attempts in the window as of the last outcome or {@link moveOn}. */
  get slow(): number {
    return this.slowTotal;
  }

  /** The serial of the bucket outcomes go into now (see {@link bucketSerial}). */
  get serial(): number {
    this.moveOn();
    return this.bucketSerial;
  }

  /**
   * Takes back outcomes counted `age` buckets ago (0: the current one): those of a tenant whose
   * failures (or slowness) were found to be its own, not the dependency's. Never below zero.
   */
  forget(age: number, failures: number, successes: number, slow = 0): void {
    this.moveOn();
    if (age < 0 || age >= this.buckets) return;
    const index = (this.current - age + this.buckets) % this.buckets;
    const failed = Math.min(failures, this.failuresIn[index]);
    const succeeded = Math.min(successes, this.successesIn[index]);
    this.failuresIn[index] -= failed;
    this.successesIn[index] -= succeeded;
    this.failureTotal -= failed;
    this.successTotal -= succeeded;
    const slowed = Math.min(slow, this.slowIn[index]);
    this.slowIn[index] -= slowed;
    this.slowTotal -= slowed;
  }

  /** Failures `age` buckets ago (0: the current bucket), as of the last outcome or {@link moveOn}. */
  failuresAt(age: number): number {
    return this.failuresIn[(this.current - age + this.buckets) % this.buckets];
  }

  /** Successes `age` buckets ago (0: the current bucket), as of the last outcome or {@link moveOn}. */
  successesAt(age: number): number {
    return this.successesIn[(this.current - age + this.buckets) % this.buckets];
  }

  /** An attempt ended a counted failure. */
  countFailure(): void {
    this.moveOn();
    this.failuresIn[this.current]++;
    this.failureTotal++;
  }

  /** An attempt ended a success (it resolved, or the dependency answered with an error that does not count). */
  countSuccess(): void {
    this.moveOn();
    this.successesIn[this.current]++;
    this.successTotal++;
  }

  /** An attempt that ended (its outcome counted already) was slow. */
  countSlow(): void {
    this.moveOn();
    this.slowIn[this.current]++;
    this.slowTotal++;
  }

  /** Drops what is older than the window now; a clock that stepped back drops nothing. */
  moveOn(): void {
    const due = Math.floor((this.clock.now() - this.currentStartedAt) / this.bucketMs);
    if (due <= 0) return;
    this.currentStartedAt += due * this.bucketMs;
    this.bucketSerial += due;
    for (let step = Math.min(due, this.buckets); step > 0; step--) {
      this.current = (this.current + 1) % this.buckets;
      this.failureTotal -= this.failuresIn[this.current];
      this.successTotal -= this.successesIn[this.current];
      this.slowTotal -= this.slowIn[this.current];
      this.failuresIn[this.current] = 0;
      this.successesIn[this.current] = 0;
      this.slowIn[this.current] = 0;
    }
  }

  /** Empties the window; it counts afresh from now. */
  clear(): void {
    this.failuresIn.fill(0);
    this.successesIn.fill(0);
    this.slowIn.fill(0);
    this.failureTotal = 0;
    this.successTotal = 0;
    this.slowTotal = 0;
    this.currentStartedAt = this.clock.now();
    this.bucketSerial += this.buckets;
  }
}
