import CircuitBreaker from 'opossum';
import { type Clock, isResilienceError, ResilienceError } from '../common';
import type { BreakerSettings } from './breaker-settings';
import { RollingWindow } from './rolling-window';
import { TenantBlame } from './tenant-blame';

/** The tenant of each attempt fired with one, for opossum's failure event (which hands back the attempt). */
const tenantOf = new WeakMap<Attempt, string>();

export type CircuitState = 'closed' | 'open' | 'half_open';

/** What `GET /v1/circuits` shows of one breaker; counts are of the rolling window. */
export interface CircuitSnapshot {
  state: CircuitState;
  failures: number;
  successes: number;
  /**
   * Tenants refused on their own (their calls failed while others' succeeded), with the time
   * left until each may probe; at most {@link SNAPSHOT_TENANTS} of them.
   */
  tenantsOpen: Array<{ tenant: string; retryAfterMs: number }>;
}

/** Tenants a snapshot lists at most. */
const SNAPSHOT_TENANTS = 50;

export type CircuitStateListener = (to: CircuitState, from: CircuitState) => void;

/** One attempt as the breaker fires it: opossum's action gets it as its only argument. */
export type Attempt = () => Promise<unknown>;

/** The opossum circuit inside a {@link Breaker}. */
export type OpossumCircuit = CircuitBreaker<[Attempt], unknown>;

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
  if (isResilienceError(error)) return error.kind === 'transient' || error.kind === 'timeout';
  const getStatus = (error as { getStatus?: unknown } | null)?.getStatus;
  return typeof getStatus === 'function' && DEPENDENCY_STATUSES.has(getStatus.call(error) as number);
}

// opossum's action and error filter, one of each for every breaker: an attempt comes in as the
// action's argument, so firing it makes no closure.
function runAttempt(attempt: Attempt): Promise<unknown> {
  return attempt();
}

/** opossum counts an error its filter lets through as a success. */
function doesNotCount(error: unknown): boolean {
  return !countsAgainstBreaker(error);
}

/** The part of opossum's semaphore its circuit uses. */
interface OpossumSemaphore {
  test(): boolean;
  release(): void;
}

/**
 * Admits every call and makes nothing. opossum's own semaphore, with no capacity, admits every
 * call too, but takes each slot through `Promise.resolve()`: one promise per call, about a
 * tenth of what a call through opossum allocates and of its time (bench/breaker.ts).
 */
const UNBOUNDED: OpossumSemaphore = Object.freeze({ test: () => true, release: () => undefined });

/**
 * A circuit breaker with opossum as its engine. It counts failures of kind `transient` and
 * `timeout` only; any other outcome (a 4xx, a caller that left, a refused destination) is a
 * success as far as it knows, as resilience4j treats exceptions it does not record. Once its
 * rolling window (10 buckets of `rollingCountTimeoutMs / 10`) holds `volumeThreshold` attempts
 * that ended and more than `errorThresholdPercentage` of them failed, it opens: it refuses with
 * `circuit_open` and a Retry-After of the time until it half-opens, `resetTimeoutMs` after it
 * opened. Half open, it lets exactly one probe through: a counted failure opens it again, any
 * other outcome closes it with an empty window.
 *
 * opossum decides: it counts (through {@link RollingWindow}, its `status`), opens, half-opens
 * and closes, and lets the one probe through; this class refuses before opossum would (so a
 * refusal is a `circuit_open` ResilienceError with its Retry-After, and costs opossum nothing),
 * holds it open for operators, and reports its changes of state. opossum gets no `capacity`
 * and `timeout: false`: lanes bound concurrency (opossum's semaphore lets a timed-out call go
 * on running beside the next one), and the attempt's own timeout aborts the work before it
 * reports failure, so opossum sets no timer per call. It gets no `abortController` either:
 * opossum's is one per circuit, and its abort would stop every call in flight; each attempt
 * has its own.
 *
 * Time: the window moves on the injected clock, lazily (no interval), and the Retry-After is
 * measured on it from when opossum opened. The open → half-open timer is opossum's own
 * `setTimeout` (unref'd, cleared by {@link shutdown}): opossum half-opens only on that timer
 * and takes no clock. In production both run on real time. Tests move that timer with jest's
 * fake timers and the injected FakeClock with it, an app serving HTTP on loopback included
 * (test/support/fake-timers.ts says what must stay real for that).
 *
 * An operator's {@link forceOpen} opens opossum too, and keeps it open: opossum starts its
 * reset timer whenever it opens, so when that timer half-opens it, this opens it again at
 * once, within opossum's `halfOpen` event (listeners of {@link circuit} get that `open` before
 * the `halfOpen`; {@link onStateChange} reports neither). Left half open, opossum would close on
 * the late success of an attempt that started before the operator opened it.
 */
export class Breaker {
  private readonly engine: OpossumCircuit;
  private readonly window: RollingWindow;
  private current: CircuitState = 'closed';
  private forcedOpen = false;
  private stopped = false;
  private openedAt = 0;
  private listeners: CircuitStateListener[] = [];
  private readonly blame: TenantBlame;

  constructor(
    readonly name: string,
    readonly settings: Readonly<BreakerSettings>,
    private readonly clock: Clock,
  ) {
    checkSettings(name, settings);
    this.window = new RollingWindow(clock, settings.rollingCountTimeoutMs, BUCKETS);
    this.blame = new TenantBlame(this.window, settings, clock);
    this.engine = new CircuitBreaker(runAttempt, {
      name,
      status: this.window,
      timeout: false,
      errorThresholdPercentage: settings.errorThresholdPercentage,
      volumeThreshold: settings.volumeThreshold,
      resetTimeout: settings.resetTimeoutMs,
      rollingCountTimeout: settings.rollingCountTimeoutMs,
      rollingCountBuckets: BUCKETS,
      rollingPercentilesEnabled: false,
      enableSnapshots: false,
      errorFilter: doesNotCount,
    });
    // No capacity: lanes bound concurrency. `semaphore` is a plain property of opossum's circuit.
    (this.engine as unknown as { semaphore: OpossumSemaphore }).semaphore = UNBOUNDED;
    this.engine.on('open', () => {
      this.openedAt = this.clock.now();
      this.moveTo('open');
    });
    this.engine.on('halfOpen', () => {
      if (this.forcedOpen) this.engine.open();
      else this.moveTo('half_open');
    });
    this.engine.on('close', () => this.moveTo('closed'));
    // After the window counted the failure and before opossum reads it to decide.
    this.engine.on('failure', (_error: unknown, _latency: unknown, args: unknown[]) => {
      const tenant = tenantOf.get(args[0] as Attempt);
      if (tenant !== undefined) this.blame.failed(tenant, this.engine.halfOpen);
    });
  }

  /**
   * The opossum circuit, for its events (`open`, `halfOpen`, `close`, `success`, `failure`...)
   * and its `stats`. Fire calls through {@link fire}, and open or close through
   * {@link forceOpen} and {@link close}: calls fired on the circuit itself are neither refused
   * while an operator holds it open nor given a Retry-After.
   */
  get circuit(): OpossumCircuit {
    return this.engine;
  }

  get state(): CircuitState {
    return this.current;
  }

  /**
   * The `circuit_open` error a call would get now, or undefined when it may go through. With a
   * `tenant`, also when that tenant is refused on its own.
   */
  refusal(tenant?: string): ResilienceError | undefined {
    if (this.stopped) return undefined;
    if (tenant !== undefined) {
      const ownMs = this.blame.refusalMs(tenant);
      if (ownMs !== undefined) {
        return this.openError('for this tenant: its own calls kept failing while the others succeeded', ownMs);
      }
    }
    if (this.forcedOpen) return this.openError('an operator opened it', this.settings.resetTimeoutMs);
    const engine = this.engine;
    // opossum's own test: closed, or half open with the probe not yet taken.
    if (engine.closed || engine.pendingClose) return undefined;
    if (engine.halfOpen) return this.openError('its one probe is in flight', PROBE_RETRY_AFTER_MS);
    const untilHalfOpen = this.openedAt + this.settings.resetTimeoutMs - this.clock.now();
    return this.openError('the dependency keeps failing', Math.max(1, Math.ceil(untilHalfOpen)));
  }

  /**
   * Runs `action` as one attempt the breaker watches, or refuses it with `circuit_open`. With a
   * `tenant`, its outcome is also that tenant's, so that one tenant's failures can be told from
   * the dependency's ({@link TenantBlame}).
   */
  fire<T>(action: () => Promise<T>, tenant?: string): Promise<T> {
    if (this.stopped) return action();
    const refusal = this.refusal(tenant);
    if (refusal) return Promise.reject(refusal);
    if (tenant === undefined) return this.engine.fire(action) as Promise<T>;
    this.blame.takeProbe(tenant);
    tenantOf.set(action, tenant);
    const fired = this.engine.fire(action) as Promise<T>;
    // Failures reach the blame through opossum's event, in time for its decision; the rest here.
    fired.then(
      () => this.blame.succeeded(tenant),
      (error: unknown) => {
        if (!countsAgainstBreaker(error)) this.blame.succeeded(tenant);
      },
    );
    return fired;
  }

  snapshot(): CircuitSnapshot {
    if (this.stopped) return { state: this.current, failures: 0, successes: 0, tenantsOpen: [] };
    this.window.moveOn();
    const tenantsOpen: CircuitSnapshot['tenantsOpen'] = [];
    for (const tenant of this.blame.open.keys()) {
      if (tenantsOpen.length === SNAPSHOT_TENANTS) break;
      tenantsOpen.push({ tenant, retryAfterMs: this.blame.refusalMs(tenant) ?? 0 });
    }
    return { state: this.current, failures: this.window.failures, successes: this.window.successes, tenantsOpen };
  }

  /** Tenants refused on their own now (their probe out included). */
  get tenantsOpen(): number {
    let open = 0;
    for (const tenant of this.blame.open.keys()) if (this.blame.refusalMs(tenant) !== undefined) open++;
    return open;
  }

  /** Calls `listener` with each tenant refused on its own; returns a function that removes it. */
  onTenantOpen(listener: (tenant: string) => void): () => void {
    return this.blame.onOpen(listener);
  }

  /** For operators: open now and stay open, without half-opening, until {@link close}. */
  forceOpen(): void {
    if (this.stopped) return;
    this.forcedOpen = true;
    this.engine.open();
  }

  /** For operators: close now with an empty window, whatever the state. */
  close(): void {
    if (this.stopped) return;
    this.forcedOpen = false;
    this.blame.clear();
    // A closing circuit empties the window itself; one already closed does not close again.
    if (this.engine.closed) this.window.clear();
    else this.engine.close();
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
    this.engine.shutdown();
    this.listeners = [];
  }

  private openError(why: string, retryAfterMs: number): ResilienceError {
    return new ResilienceError('circuit_open', `circuit '${this.name}' is open: ${why}`, { retryAfterMs });
  }

  private moveTo(to: CircuitState): void {
    const from = this.current;
    if (to === from) return;
    this.current = to;
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
