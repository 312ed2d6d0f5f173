import CircuitBreaker from 'opossum';
import { type Clock, ResilienceError } from '../common';
import { countsAgainstBreaker, isStopped } from './attempt-outcome';
import { type BreakerSettings, checkBreakerSettings } from './breaker-settings';
import {
  type Attempt,
  errorFilter,
  freeProbeSlot,
  onCountedFailure,
  type OpossumCircuit,
  takeOver,
} from './opossum-internals';
import { RollingWindow } from './rolling-window';
import { TenantBlame } from './tenant-blame';

export { countsAgainstBreaker } from './attempt-outcome';
export type { Attempt, OpossumCircuit } from './opossum-internals';

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

const BUCKETS = 10;
/** Retry-After while the one half-open probe is out: it settles within its attempt timeout. */
const PROBE_RETRY_AFTER_MS = 1_000;

// opossum's action, one for every breaker: an attempt comes in as its argument, so firing it
// makes no closure.
function runAttempt(attempt: Attempt): Promise<unknown> {
  return attempt();
}

/**
 * A circuit breaker with opossum as its engine. It counts failures of kind `transient` and
 * `timeout` only. An attempt `stopped` (its caller left, a hedge answered first, shutdown) is
 * neither a success nor a failure: it is not counted, opens and closes nothing, and when it was
 * the half-open probe the next call probes instead. Any other outcome (a 4xx, a refused
 * destination) shows the dependency answered: a success as far as it knows, as resilience4j
 * treats exceptions it does not record. Once its rolling window (10 buckets of
 * `rollingCountTimeoutMs / 10`) holds `volumeThreshold` attempts that ended and more than
 * `errorThresholdPercentage` of them failed, it opens: it refuses with `circuit_open` and a
 * Retry-After of the time until it half-opens, `resetTimeoutMs` after it opened. Half open, it
 * lets exactly one probe through: a counted failure opens it again, a success or a 4xx closes
 * it with an empty window, a `stopped` one leaves it half open with the probe slot free.
 *
 * opossum decides: it counts (through {@link RollingWindow}, its `status`), opens, half-opens
 * and lets the one probe through. This class closes a half-open circuit itself (opossum would
 * close on a `stopped` attempt too, which it sees as a success), gives a stopped probe's slot
 * back (every reliance on opossum's private parts is in opossum-internals.ts), refuses before
 * opossum would (so a refusal is a `circuit_open` ResilienceError with its Retry-After, and
 * costs opossum nothing), holds it open for operators, and reports its changes of state. opossum gets no `capacity`
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
  /** The half-open probe out now, so that only its own `stopped` end gives its slot back. */
  private probe: Attempt | undefined;
  /** A `stopped` attempt the error filter just passed on, for the `success` opossum emits at once for it. */
  private endingStopped: Attempt | undefined;

  constructor(
    readonly name: string,
    readonly settings: Readonly<BreakerSettings>,
    private readonly clock: Clock,
  ) {
    checkBreakerSettings(name, settings, BUCKETS);
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
      errorFilter: errorFilter((error, attempt) => this.filtered(error, attempt)),
    });
    takeOver(this.engine);
    this.engine.on('success', () => this.reportedSuccess());
    this.engine.on('open', () => {
      this.probe = undefined;
      this.openedAt = this.clock.now();
      this.moveTo('open');
    });
    this.engine.on('halfOpen', () => {
      this.probe = undefined;
      if (this.forcedOpen) this.engine.open();
      else this.moveTo('half_open');
    });
    this.engine.on('close', () => {
      this.probe = undefined;
      this.moveTo('closed');
    });
    // After the window counted the failure and before opossum reads it to decide.
    onCountedFailure(this.engine, (attempt) => {
      const tenant = tenantOf.get(attempt);
      if (tenant !== undefined) this.blame.failed(tenant, this.engine.halfOpen);
    });
  }

  /**
   * The opossum circuit, for its events (`open`, `halfOpen`, `close`, `success`, `failure`...)
   * and its `stats` (a `stopped` attempt's end is a `success` event to opossum, as a 4xx is).
   * Fire calls through {@link fire}, and open or close through {@link forceOpen} and
   * {@link close}: calls fired on the circuit itself are neither refused while an operator holds
   * it open nor given a Retry-After.
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
    const engine = this.engine;
    if (engine.pendingClose) this.probe = action;
    if (tenant === undefined) return engine.fire(action) as Promise<T>;
    this.blame.takeProbe(tenant, action);
    tenantOf.set(action, tenant);
    const fired = engine.fire(action) as Promise<T>;
    // Failures reach the blame through opossum's event, in time for its decision; the rest here.
    fired.then(
      () => this.blame.succeeded(tenant),
      (error: unknown) => {
        if (isStopped(error)) this.blame.stopped(tenant, action);
        else if (!countsAgainstBreaker(error)) this.blame.answered(tenant, action);
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

  /**
   * opossum's error filter: true for an error that does not count, which opossum then reports
   * as a success at once. A `stopped` one is marked, for {@link reportedSuccess} to undo that.
   */
  private filtered(error: unknown, attempt: Attempt): boolean {
    if (countsAgainstBreaker(error)) return false;
    if (isStopped(error)) {
      this.endingStopped = attempt;
      this.window.skipNextSuccess();
    }
    return true;
  }

  /** What opossum's own `success` listener did, except for a `stopped` attempt (see the class). */
  private reportedSuccess(): void {
    const stopped = this.endingStopped;
    if (stopped === undefined) {
      if (this.engine.halfOpen) this.engine.close();
      return;
    }
    this.endingStopped = undefined;
    // Only the probe's own end frees its slot: an older attempt's ends while the probe is out.
    if (stopped === this.probe && this.engine.halfOpen && !this.engine.pendingClose) {
      this.probe = undefined;
      freeProbeSlot(this.engine);
    }
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
