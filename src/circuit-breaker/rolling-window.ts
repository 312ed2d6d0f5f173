import { EventEmitter } from 'node:events';
import CircuitBreaker from 'opossum';
import type { Clock } from '../common';

/** The methods opossum's circuit calls on its Status, beyond what its type declares. */
interface OpossumStatus extends CircuitBreaker.Status {
  increment(property: string, latencyMs?: number): void;
  open(): void;
  close(): void;
  shutdown(): void;
}

/** A Status of opossum's own that starts no timer: no snapshots, buckets moved by an emitter. */
function timerlessStatusOptions(windowMs: number, buckets: number): CircuitBreaker.StatusOptions {
  return {
    rollingCountTimeout: windowMs,
    rollingCountBuckets: buckets,
    rollingPercentilesEnabled: false,
    enableSnapshots: false,
    // Given only so that opossum's Status sets no interval of its own; nothing emits on it.
    rotateBucketController: new EventEmitter(),
  };
}

/**
 * opossum's Status class. The package exports it as a type only; `newStatus()` is its public
 * way to make one, and opossum takes a `status` option only if it is an instance of that class.
 */
const OpossumStatusClass = Object.getPrototypeOf(CircuitBreaker.newStatus(timerlessStatusOptions(10, 1)))
  .constructor as new (options: CircuitBreaker.StatusOptions) => OpossumStatus;

/**
 * The rolling window of one breaker's opossum circuit, given to it as its `status`: failures
 * and successes of the last `windowMs`, in `buckets` equal buckets, and how many of them were
 * slow. opossum reads it to decide to open on failures (`stats`); the breaker reads it to open
 * on slow calls ({@link slow}), and for its snapshot.
 *
 * It differs from opossum's own Status in three ways, each on purpose:
 * - It moves on lazily, on the injected clock: each use first drops the buckets the clock has
 *   passed, so there is no interval, and tests move it with their clock.
 * - It counts only what the breaker needs, when an attempt ends: no latency per call (opossum's
 *   Status keeps one for every outcome until its bucket is dropped, even with percentiles
 *   off), no fires, rejects or cache counts; recording is O(1) and allocates nothing, and the
 *   totals are kept as it goes, so `stats` costs the same whatever the buckets hold.
 * - `fires` is the attempts that ended (failures + successes), not those started: opossum
 *   compares the failures with it, and attempts still in flight have no outcome to dilute the
 *   share with, nor to count; nor have attempts that were stopped ({@link skipNextSuccess}).
 *
 * opossum empties it when the circuit closes (`close()`): a circuit that closed starts
 * counting afresh.
 */
export class RollingWindow extends OpossumStatusClass {
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
  /** The next success opossum reports is not one: see {@link skipNextSuccess}. */
  private skipSuccess = false;

  constructor(
    private readonly clock: Clock,
    readonly windowMs: number,
    readonly buckets: number,
  ) {
    super(timerlessStatusOptions(windowMs, buckets));
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

  /** Totals of the window now, in opossum's shape; `fires` is the attempts that ended. */
  override get stats(): CircuitBreaker.Stats {
    this.moveOn();
    return statsOf(this.failureTotal, this.successTotal);
  }

  /** The buckets now, newest first, in opossum's shape. */
  override get window(): CircuitBreaker.Window {
    this.moveOn();
    const window: CircuitBreaker.Window = [];
    for (let age = 0; age < this.buckets; age++) {
      const index = (this.current - age + this.buckets) % this.buckets;
      window.push(statsOf(this.failuresIn[index], this.successesIn[index]));
    }
    return window;
  }

  /** opossum's circuit reports each event here; only the outcomes of attempts count. */
  override increment(property: string, _latencyMs?: number): void {
    if (property === 'failures') {
      this.moveOn();
      this.failuresIn[this.current]++;
      this.failureTotal++;
    } else if (property === 'successes') {
      if (this.skipSuccess) {
        this.skipSuccess = false;
        return;
      }
      this.moveOn();
      this.successesIn[this.current]++;
      this.successTotal++;
    }
  }

  /** An attempt that ended (its outcome counted already) was slow. */
  countSlow(): void {
    this.moveOn();
    this.slowIn[this.current]++;
    this.slowTotal++;
  }

  /**
   * Leaves out the success opossum reports next: the end of a `stopped` attempt, which opossum
   * reports as a success (its error filter let it through) right after the filter said so.
   */
  skipNextSuccess(): void {
    this.skipSuccess = true;
  }

  /** opossum calls this when the circuit closes. */
  override close(): void {
    this.clear();
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

/** One object literal: opossum reads the stats on every failure that counts. */
function statsOf(failures: number, successes: number): CircuitBreaker.Stats {
  return {
    failures,
    successes,
    fires: failures + successes,
    fallbacks: 0,
    rejects: 0,
    timeouts: 0,
    cacheHits: 0,
    cacheMisses: 0,
    semaphoreRejections: 0,
    percentiles: {},
    latencyTimes: [],
    latencyMean: -1,
  };
}
