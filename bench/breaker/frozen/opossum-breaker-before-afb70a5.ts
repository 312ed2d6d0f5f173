/**
 * For reference: the opossum Breaker as it was before commit afb70a5 replaced it
 * (src/circuit-breaker/breaker.ts at afb70a5^), with opossum's own Status. Kept as it was, to
 * show what the opossum Breaker of today no longer pays; only its imports (the service's code
 * from dist/) and one comment changed. Loaded through ../load.ts, compiled by tsc like dist/.
 */
import { EventEmitter } from 'node:events';
import OpossumCircuit from 'opossum';
import type { Clock, ResilienceError } from '../../../src/common';
import type { BreakerSettings } from '../../../src/circuit-breaker/breaker-settings';
import { built } from '../../support/built';

const common = built<typeof import('../../../src/common')>('common');

export type CircuitState = 'closed' | 'open' | 'half_open';

/** What `GET /v1/circuits` shows of one breaker; counts are of the rolling window. */
export interface CircuitSnapshot {
  state: CircuitState;
  failures: number;
  successes: number;
}

export type CircuitStateListener = (to: CircuitState, from: CircuitState) => void;

const BUCKETS = 10;
/** Retry-After while the one half-open probe is out: it settles within its attempt timeout. */
const PROBE_RETRY_AFTER_MS = 1_000;

/** What a company route throws when its dependency failed: Nest's HttpException 502, 503, 504. */
const DEPENDENCY_STATUSES = new Set([502, 503, 504]);

/**
 * Only a dependency's own failures count against it: a ResilienceError `transient` or
 * `timeout`, or (from a company's route) an HttpException 502, 503 or 504.
 */
export function countsAgainstBreaker(error: unknown): boolean {
  if (common.isResilienceError(error)) return error.kind === 'transient' || error.kind === 'timeout';
  const getStatus = (error as { getStatus?: unknown } | null)?.getStatus;
  return typeof getStatus === 'function' && DEPENDENCY_STATUSES.has(getStatus.call(error) as number);
}

/**
 * A circuit breaker on opossum. It counts attempt failures of kind `transient` and `timeout`
 * only; any other outcome (a 4xx, a caller that left, a refused destination) is a success as
 * far as it knows, as resilience4j treats exceptions it does not record. When open it refuses
 * with `circuit_open` and a Retry-After of the time until it half-opens; half open, it lets
 * exactly one probe through.
 *
 * opossum gets no capacity and no timeout: lanes bound concurrency, and the attempt's own
 * timeout aborts the work before it reports failure. Its rolling window turns
 * on the injected clock, lazily, when the breaker is used; only the open → half-open timer is
 * opossum's own (unref'd).
 */
export class Breaker {
  private readonly circuit: OpossumCircuit<[() => Promise<unknown>], unknown>;
  private readonly rotation = new EventEmitter();
  private readonly bucketMs: number;
  private bucketStartedAt: number;
  private openedAt = 0;
  private forcedOpen = false;
  private stopped = false;
  private reported: CircuitState = 'closed';
  private listeners: CircuitStateListener[] = [];

  constructor(
    readonly name: string,
    readonly settings: Readonly<BreakerSettings>,
    private readonly clock: Clock,
  ) {
    checkSettings(name, settings);
    this.bucketMs = settings.rollingCountTimeoutMs / BUCKETS;
    this.bucketStartedAt = clock.now();
    this.circuit = new OpossumCircuit((action: () => Promise<unknown>) => action(), {
      name,
      timeout: false,
      errorThresholdPercentage: settings.errorThresholdPercentage,
      volumeThreshold: settings.volumeThreshold,
      resetTimeout: settings.resetTimeoutMs,
      rollingCountTimeout: settings.rollingCountTimeoutMs,
      rollingCountBuckets: BUCKETS,
      rotateBucketController: this.rotation,
      rollingPercentilesEnabled: false,
      enableSnapshots: false,
      // opossum asks this before it counts a failure and decides to open: an attempt may have
      // outlasted the window, so the window moves on first (a success needs no such care).
      errorFilter: (error: unknown) => {
        this.rotate();
        return !countsAgainstBreaker(error);
      },
    });
    this.circuit.on('open', () => {
      this.openedAt = this.clock.now();
      this.report();
    });
    this.circuit.on('halfOpen', () => this.report());
    this.circuit.on('close', () => {
      this.clearWindow();
      this.report();
    });
  }

  get state(): CircuitState {
    if (this.stopped) return this.reported;
    if (this.forcedOpen) return 'open';
    if (this.circuit.closed) return 'closed';
    return this.circuit.halfOpen ? 'half_open' : 'open';
  }

  /** The `circuit_open` error a call would get now, or undefined when it may go through. */
  refusal(): ResilienceError | undefined {
    if (this.stopped) return undefined;
    if (this.forcedOpen) return this.openError('an operator opened it', this.settings.resetTimeoutMs);
    const circuit = this.circuit;
    // opossum's own test: closed, or half open with the probe not yet taken.
    if (circuit.closed || circuit.pendingClose) return undefined;
    if (circuit.halfOpen) return this.openError('its one probe is in flight', PROBE_RETRY_AFTER_MS);
    const untilHalfOpen = this.openedAt + this.settings.resetTimeoutMs - this.clock.now();
    return this.openError('the dependency keeps failing', Math.max(1, Math.ceil(untilHalfOpen)));
  }

  /** Runs `action` as one attempt the breaker watches, or refuses it with `circuit_open`. */
  fire<T>(action: () => Promise<T>): Promise<T> {
    if (this.stopped) return action();
    const refusal = this.refusal();
    if (refusal) return Promise.reject(refusal);
    this.rotate();
    return this.circuit.fire(action) as Promise<T>;
  }

  snapshot(): CircuitSnapshot {
    if (this.stopped) return { state: this.state, failures: 0, successes: 0 };
    this.rotate();
    const { failures, successes } = this.circuit.stats;
    return { state: this.state, failures, successes };
  }

  /** For operators: open now and stay open, without half-opening, until {@link close}. */
  forceOpen(): void {
    this.forcedOpen = true;
    this.openedAt = this.clock.now();
    this.circuit.open();
    this.report();
  }

  /** For operators: close now with an empty window, whatever the state. */
  close(): void {
    this.forcedOpen = false;
    this.circuit.close();
    this.clearWindow();
    this.report();
  }

  /** Calls `listener` on every change of state; returns a function that removes it. */
  onStateChange(listener: CircuitStateListener): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((item) => item !== listener);
    };
  }

  /** Clears opossum's reset timer; the breaker refuses nothing and counts nothing after. */
  shutdown(): void {
    this.stopped = true;
    this.circuit.shutdown();
    this.listeners = [];
  }

  private openError(why: string, retryAfterMs: number): ResilienceError {
    return new common.ResilienceError('circuit_open', `circuit '${this.name}' is open: ${why}`, { retryAfterMs });
  }

  /** Moves the window on by the buckets the clock has passed since it was last used. */
  private rotate(): void {
    const due = Math.floor((this.clock.now() - this.bucketStartedAt) / this.bucketMs);
    if (due <= 0) return;
    this.bucketStartedAt += due * this.bucketMs;
    for (let i = Math.min(due, BUCKETS); i > 0; i--) this.rotation.emit('rotate');
  }

  /** A closed circuit starts counting afresh: old failures must not reopen it at once. */
  private clearWindow(): void {
    for (let i = 0; i < BUCKETS; i++) this.rotation.emit('rotate');
    this.bucketStartedAt = this.clock.now();
  }

  private report(): void {
    const to = this.state;
    const from = this.reported;
    if (to === from) return;
    this.reported = to;
    for (const listener of this.listeners) listener(to, from);
  }
}

function checkSettings(name: string, settings: BreakerSettings): void {
  const { errorThresholdPercentage, volumeThreshold, resetTimeoutMs, rollingCountTimeoutMs } = settings;
  if (!(errorThresholdPercentage >= 1 && errorThresholdPercentage <= 100)) {
    throw new RangeError(`breaker '${name}': errorThresholdPercentage must be from 1 to 100`);
  }
  if (!(Number.isSafeInteger(volumeThreshold) && volumeThreshold >= 1)) {
    throw new RangeError(`breaker '${name}': volumeThreshold must be an integer of at least 1`);
  }
  if (!(resetTimeoutMs > 0 && Number.isFinite(resetTimeoutMs))) {
    throw new RangeError(`breaker '${name}': resetTimeoutMs must be a positive number`);
  }
  if (!(rollingCountTimeoutMs >= BUCKETS && Number.isFinite(rollingCountTimeoutMs))) {
    throw new RangeError(`breaker '${name}': rollingCountTimeoutMs must be at least ${BUCKETS}`);
  }
}
