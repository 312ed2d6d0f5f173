import CircuitBreaker from 'opossum';
import { type Clock, ResilienceError } from '../common';
import { countsAgainstBreaker, type Ending, endingOf, isStopped, isTimeout } from './attempt-outcome';
import {
  type BreakerSettings,
  breakerSettings,
  checkBreakerSettings,
  type FullBreakerSettings,
} from './breaker-settings';
import { BreakerEvents, type CircuitState, type CircuitStateListener } from './breaker-events';
import { type CircuitSnapshot, SNAPSHOT_TENANTS } from './circuit-snapshot';
import { HalfOpenProbes, type ProbeOutcome } from './half-open-probes';
import { HalfOpenSuspect } from './half-open-suspect';
import { OpenTime } from './open-time';
import {
  type Attempt,
  errorFilter,
  freeProbeSlot,
  onCountedFailure,
  type OpossumCircuit,
  setOpenTime,
  takeOver,
} from './opossum-engine';
import { RollingWindow } from './rolling-window';
import { TenantBlame } from './tenant-blame';

export { countsAgainstBreaker } from './attempt-outcome';
export type { CircuitState, CircuitStateListener } from './breaker-events';
export type { CircuitSnapshot } from './circuit-snapshot';
export type { ProbeOutcome } from './half-open-probes';
export type { Attempt, OpossumCircuit } from './opossum-engine';

/** The tenant of each attempt fired with one, for opossum's failure event (which hands back the attempt). */
const tenantOf = new WeakMap<Attempt, string>();
/** Attempts whose caller shortened their timeout ({@link FireOptions}), for opossum's error filter. */
const shortenedAttempts = new WeakSet<Attempt>();

/** How an attempt is fired, beyond its tenant. */
export interface FireOptions {
  /**
   * Its timeout is shorter than the dependency's own (its caller asked for less: X-Timeout-Ms):
   * a `timeout` it ends with is the caller's outcome, not the dependency's,
   * and counts nowhere (as `stopped`); and it may not be a half-open probe, the shared one or
   * its tenant's own, which it could hold without ever giving a verdict.
   */
  timeoutShortened?: boolean;
}

const BUCKETS = 10;
/** Retry-After while the half-open probes are out: they settle within their attempt timeout. */
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
 * Retry-After of the time until it half-opens, its open time after it opened. Half open, it
 * lets `halfOpenProbes` probes through (one by default): a counted failure opens it again, a
 * success or a 4xx each fill one probe's part and close it with an empty window once all have,
 * a `stopped` probe leaves it half open with its slot free. Every attempt that ends while it is
 * half open counts so, a probe or an older one: each tells how the dependency is now.
 *
 * Opt-in, as resilience4j has them:
 * - Slow calls (`slowCallDurationMs`): an attempt that took longer, on the injected clock from
 *   {@link fire} to its end, is slow whatever its outcome (a `stopped` one is nothing). Once the
 *   window holds `volumeThreshold` attempts, more than `slowCallRatePercentage` of them slow
 *   opens it as failures do. Half open, a slow success is a failed probe. Measuring costs a
 *   promise reaction and two closures per attempt, and so is only done when set.
 * - An open time that backs off: each failed (or slow) probe multiplies it by
 *   `backoffMultiplier`, up to `maxResetTimeoutMs`; it is `resetTimeoutMs` again once closed.
 *
 * opossum decides on failures: it counts (through {@link RollingWindow}, its `status`), opens,
 * half-opens and lets the first probe through. This class closes a half-open circuit itself
 * (opossum would close on a `stopped` attempt too, which it sees as a success, and on the first
 * success), gives back probe slots (a stopped probe's, and those of further probes), opens on
 * slow calls, sets how long opossum's next opening lasts (every reliance on opossum's private
 * parts is in opossum-engine.ts), refuses before opossum would (so a refusal is a
 * `circuit_open` ResilienceError with its Retry-After, and costs opossum nothing), holds it
 * open for operators, and reports its changes of state. opossum gets no `capacity`
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
  private readonly events = new BreakerEvents();
  private readonly blame: TenantBlame;
  private readonly openTime: OpenTime;
  /** The half-open probes out now, so that only their own `stopped` ends give their slots back. */
  private readonly probes: HalfOpenProbes;
  /** `slowCallDurationMs`, or -1 when no call is ever slow. */
  private readonly slowMs: number;
  /**
   * An attempt the error filter just passed on as neither a success nor a failure, for the
   * `success` opossum emits at once for it: `stopped` (its caller left, or its caller's own
   * timeout), or `failed` (a failure of a tenant's own while half open).
   */
  private endingUncounted: { attempt: Attempt; outcome: 'stopped' | 'failed' } | undefined;
  /** The tenant refused alone this half-open period on a failure of its own, if any. */
  private readonly suspect = new HalfOpenSuspect();

  /** The settings it was given, with the defaults of those left out. */
  readonly settings: Readonly<FullBreakerSettings>;

  constructor(
    readonly name: string,
    given: Readonly<BreakerSettings>,
    private readonly clock: Clock,
  ) {
    const settings = breakerSettings(given);
    this.settings = settings;
    checkBreakerSettings(name, settings, BUCKETS);
    this.window = new RollingWindow(clock, settings.rollingCountTimeoutMs, BUCKETS);
    this.blame = new TenantBlame(this.window, settings, clock);
    this.openTime = new OpenTime(settings);
    this.probes = new HalfOpenProbes(settings.halfOpenProbes);
    this.slowMs = settings.slowCallDurationMs ?? -1;
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
      // Opened again from half open: the dependency's failure, not the suspect's.
      const suspect = this.suspect.end();
      if (suspect !== undefined) this.blame.forgive(suspect);
      this.probes.reset();
      this.openedAt = this.clock.now();
      this.moveTo('open');
    });
    this.engine.on('halfOpen', () => {
      this.probes.reset();
      if (this.forcedOpen) this.engine.open();
      else this.moveTo('half_open');
    });
    this.engine.on('close', () => {
      // Another tenant was served right after the suspect failed: it stays refused alone.
      this.suspect.end();
      this.probes.reset();
      setOpenTime(this.engine, this.openTime.reset());
      this.moveTo('closed');
    });
    // After the window counted the failure and before opossum reads it to decide.
    onCountedFailure(this.engine, (attempt) => {
      // Half open, opossum opens again on any counted failure: for longer, when it backs off.
      if (this.engine.halfOpen) this.probeFailed('failed');
      const tenant = tenantOf.get(attempt);
      if (tenant !== undefined) this.blame.failed(tenant, this.engine.halfOpen);
    });
  }

  /**
   * The opossum circuit, for its events (`open`, `halfOpen`, `close`, `success`, `failure`...)
   * and its `stats` (a `stopped` attempt's end is a `success` event to opossum, as a 4xx is).
   * Fire calls through {@link fire}, and open or close through {@link forceOpen} and
   * {@link close}: calls fired on the circuit itself are neither refused while an operator holds
   * it open nor given a Retry-After, nor measured for slowness.
   */
  get circuit(): OpossumCircuit {
    return this.engine;
  }

  get state(): CircuitState {
    return this.current;
  }

  /**
   * The `circuit_open` error a call would get now, or undefined when it may go through. With a
   * `tenant`, also when that tenant is refused on its own; with `timeoutShortened`, also when
   * the call would be a probe ({@link FireOptions}). A tenant refused because the circuit is
   * open is remembered as waiting for it ({@link HalfOpenSuspect}).
   */
  refusal(tenant?: string, timeoutShortened = false): ResilienceError | undefined {
    if (this.stopped) return undefined;
    if (tenant !== undefined) {
      const ownMs = this.blame.refusalMs(tenant);
      if (ownMs !== undefined) {
        return this.openError('for this tenant: its own calls kept failing while the others succeeded', ownMs);
      }
      if (timeoutShortened && this.blame.open.has(tenant)) return this.shortenedProbeError();
    }
    if (this.forcedOpen) return this.openError('an operator opened it', this.settings.resetTimeoutMs);
    const engine = this.engine;
    if (engine.closed) return undefined;
    // opossum's own test: half open with a probe slot free.
    if (engine.pendingClose) return timeoutShortened ? this.shortenedProbeError() : undefined;
    // Remembered as waiting for the dependency: another tenant's failure half open may be its own.
    if (tenant !== undefined) this.suspect.waiting(tenant);
    if (engine.halfOpen) {
      const probes = this.settings.halfOpenProbes;
      return this.openError(
        probes === 1 ? 'its one probe is in flight' : `its ${probes} probes are in flight`,
        PROBE_RETRY_AFTER_MS,
      );
    }
    const untilHalfOpen = this.openedAt + this.openTime.ms - this.clock.now();
    return this.openError('the dependency keeps failing', Math.max(1, Math.ceil(untilHalfOpen)));
  }

  /**
   * Runs `action` as one attempt the breaker watches, or refuses it with `circuit_open`. With a
   * `tenant`, its outcome is also that tenant's, so that one tenant's failures can be told from
   * the dependency's ({@link TenantBlame}).
   */
  fire<T>(action: () => Promise<T>, tenant?: string, options?: FireOptions): Promise<T> {
    if (this.stopped) return action();
    const shortened = options?.timeoutShortened === true;
    const refusal = this.refusal(tenant, shortened);
    if (refusal) return Promise.reject(refusal);
    const engine = this.engine;
    const probing = engine.pendingClose;
    const measured = this.slowMs >= 0;
    if (shortened) shortenedAttempts.add(action);
    if (tenant === undefined && !probing && !measured) return engine.fire(action) as Promise<T>;
    if (tenant !== undefined) {
      this.blame.takeProbe(tenant, action);
      tenantOf.set(action, tenant);
    }
    const startedAt = measured ? this.clock.now() : 0;
    const fired = engine.fire(action) as Promise<T>;
    // opossum took the probe slot as it fired; give it back while more probes may go (unless
    // an action that threw at once has opened it again already).
    if (probing && this.probes.take(action) && this.engine.halfOpen && !this.engine.pendingClose) {
      freeProbeSlot(engine);
    }
    if (tenant === undefined && !measured) return fired;
    // Failures reach the blame through opossum's event, in time for its decision; the rest here.
    fired.then(
      () => this.ended(action, tenant, startedAt, 'succeeded'),
      (error: unknown) =>
        this.ended(action, tenant, startedAt, shortened && isTimeout(error) ? 'stopped' : endingOf(error)),
    );
    return fired;
  }

  /**
   * The breaker now. With `viewer`, `tenantsOpen` holds that tenant alone, if it is refused on
   * its own: which other tenants are, and when they may call again, is theirs.
   */
  snapshot(viewer?: string): CircuitSnapshot {
    if (this.stopped) return { state: this.current, failures: 0, successes: 0, tenantsOpen: [] };
    this.window.moveOn();
    const tenantsOpen = this.openTenants(viewer);
    const snapshot: CircuitSnapshot = {
      state: this.current,
      failures: this.window.failures,
      successes: this.window.successes,
      tenantsOpen,
    };
    if (this.slowMs >= 0) snapshot.slowCalls = this.window.slow;
    if (this.settings.backoffMultiplier > 1) snapshot.openTimeMs = this.openTime.ms;
    return snapshot;
  }

  /** Tenants refused on their own (their probe out included), at most {@link SNAPSHOT_TENANTS}; or `only` if it is. */
  private openTenants(only?: string): CircuitSnapshot['tenantsOpen'] {
    const tenants = only === undefined ? this.blame.open.keys() : this.blame.open.has(only) ? [only] : [];
    const open: CircuitSnapshot['tenantsOpen'] = [];
    for (const tenant of tenants) {
      if (open.length === SNAPSHOT_TENANTS) break;
      open.push({ tenant, retryAfterMs: this.blame.refusalMs(tenant) ?? 0 });
    }
    return open;
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

  /** Calls `listener` on each slow attempt (`slowCallDurationMs`); returns a function that removes it. */
  onSlowCall(listener: () => void): () => void {
    return this.events.onSlowCall(listener);
  }

  /**
   * Calls `listener` with how each attempt that ended while half open came out (a probe, or an
   * older attempt: either tells how the dependency is now); returns a function that removes it.
   */
  onProbe(listener: (outcome: ProbeOutcome) => void): () => void {
    return this.events.onProbe(listener);
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
    return this.events.onStateChange(listener);
  }

  /** Clears opossum's reset timer; the breaker refuses nothing and counts nothing after. */
  shutdown(): void {
    this.stopped = true;
    this.engine.shutdown();
    this.events.clear();
  }

  /**
   * opossum's error filter: true for an error that does not count, which opossum then reports
   * as a success at once. One that is neither a success nor a failure is marked, for
   * {@link reportedSuccess} to undo that: `stopped`, a `timeout` its caller chose
   * ({@link FireOptions}), and a tenant's own failure while half open ({@link HalfOpenSuspect}).
   */
  private filtered(error: unknown, attempt: Attempt): boolean {
    let outcome: 'stopped' | 'failed';
    if (countsAgainstBreaker(error)) {
      if (shortenedAttempts.has(attempt) && isTimeout(error)) outcome = 'stopped';
      else if (this.engine.halfOpen && this.ownHalfOpenFailure(attempt)) outcome = 'failed';
      else return false;
    } else if (isStopped(error)) outcome = 'stopped';
    else return true;
    this.endingUncounted = { attempt, outcome };
    this.window.skipNextSuccess();
    return true;
  }

  /** A counted failure while half open that is its tenant's own: that tenant is refused alone. */
  private ownHalfOpenFailure(attempt: Attempt): boolean {
    const tenant = tenantOf.get(attempt);
    if (!this.suspect.ownFailure(tenant, tenant !== undefined && this.blame.open.has(tenant))) return false;
    this.blame.failedOwn(tenant!);
    return true;
  }

  /** What opossum's own `success` listener did, except for an attempt that did not count (see the class). */
  private reportedSuccess(): void {
    const uncounted = this.endingUncounted;
    if (uncounted === undefined) {
      // Measuring slowness, a half-open success is judged once its duration is known (ended).
      if (this.engine.halfOpen && this.slowMs < 0) this.probeSucceeded();
      return;
    }
    this.endingUncounted = undefined;
    // Only a probe's own end frees its slot: an older attempt's ends while the probes are out.
    if (this.probes.stopped(uncounted.attempt) && this.engine.halfOpen) {
      this.events.probe(uncounted.outcome);
      if (!this.engine.pendingClose) freeProbeSlot(this.engine);
    }
  }

  /**
   * The end of an attempt fired with a tenant or measured for slowness, once its promise
   * settled: after opossum counted it (and opened or closed on it).
   */
  private ended(attempt: Attempt, tenant: string | undefined, startedAt: number, ending: Ending): void {
    const slow = this.slowMs >= 0 && ending !== 'stopped' && this.clock.now() - startedAt > this.slowMs;
    // A tenant refused on its own whose probe was slow is refused again: the slowness is its own.
    let ownSlowness = false;
    if (tenant !== undefined) {
      if (ending === 'succeeded') {
        ownSlowness = slow && this.blame.slowProbe(tenant);
        if (!ownSlowness) this.blame.succeeded(tenant);
      } else if (ending === 'stopped') this.blame.stopped(tenant, attempt);
      else if (ending === 'answered') this.blame.answered(tenant, attempt);
    }
    if (this.slowMs < 0 || ending === 'stopped') return;
    if (slow) this.events.slowCall();
    if (this.engine.halfOpen) {
      // A counted failure opened it already; anything else is judged by its duration, whoever
      // sent it (while half open, the shared probe decides, as for failures).
      if (ending === 'failed') return;
      if (slow) this.probeFailed('slow');
      else this.probeSucceeded();
      return;
    }
    if (!slow || ownSlowness) return;
    this.window.countSlow();
    if (tenant !== undefined) this.blame.slow(tenant);
    if (this.engine.closed && this.slowPastThreshold()) this.engine.open();
  }

  /** More than `slowCallRatePercentage` of the window's attempts were slow, `volumeThreshold` of them at least. */
  private slowPastThreshold(): boolean {
    const ended = this.window.failures + this.window.successes;
    return (
      ended >= this.settings.volumeThreshold && (this.window.slow / ended) * 100 > this.settings.slowCallRatePercentage
    );
  }

  /** A success while half open: closes once `halfOpenProbes` of them came. */
  private probeSucceeded(): void {
    this.events.probe('succeeded');
    if (this.probes.success()) this.engine.close();
  }

  /**
   * A counted failure (opossum opens the circuit on it) or a slow success (this opens it) while
   * half open: it opens again, for longer when it backs off.
   */
  private probeFailed(outcome: 'failed' | 'slow'): void {
    this.events.probe(outcome);
    setOpenTime(this.engine, this.openTime.grow());
    if (outcome === 'slow') this.engine.open();
  }

  /**
   * A call whose caller shortened its timeout, when it would be a probe: it could end on its own
   * timeout and say nothing of the dependency, holding the slot meanwhile. Refused as the probe
   * slot is while it is out; a call with the full timeout probes.
   */
  private shortenedProbeError(): ResilienceError {
    return this.openError(
      'half open, and a call with a shortened timeout cannot be its probe (one with the full timeout can)',
      PROBE_RETRY_AFTER_MS,
    );
  }

  private openError(why: string, retryAfterMs: number): ResilienceError {
    return new ResilienceError('circuit_open', `circuit '${this.name}' is open: ${why}`, { retryAfterMs });
  }

  private moveTo(to: CircuitState): void {
    const from = this.current;
    if (to === from) return;
    this.current = to;
    this.events.stateChanged(to, from);
  }
}
