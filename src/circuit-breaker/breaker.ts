import { type Clock, ResilienceError } from '../common';
import { endingOf, isTimeout } from './attempt-outcome';
import type { BreakerEngine } from './breaker-engine';
import { BreakerEvents, type CircuitState, type CircuitStateListener } from './breaker-events';
import { BreakerOutcomes, shortenedAttempts, tenantOf } from './breaker-outcomes';
import { type BreakerRules, breakerRules } from './breaker-rules';
import {
  type BreakerSettings,
  breakerSettings,
  checkBreakerSettings,
  type FullBreakerSettings,
} from './breaker-settings';
import { BreakerState } from './breaker-state';
import { type CircuitSnapshot, SNAPSHOT_TENANTS } from './circuit-snapshot';
import type { ProbeOutcome } from './half-open-probes';
import { OpenTime } from './open-time';
import { OpossumEngine, type OpossumCircuit } from './opossum-engine';
import { RollingWindow } from './rolling-window';
import type { SlowCallRule } from './slow-call-rule';
import { TenantBlame } from './tenant-blame';
import { TenantCircuits } from './tenant-circuits';

export { countsAgainstBreaker } from './attempt-outcome';
export type { BlameRule } from './blame-rule';
export type { Attempt } from './breaker-engine';
export type { CircuitState, CircuitStateListener } from './breaker-events';
export type { CircuitSnapshot } from './circuit-snapshot';
export type { ProbeOutcome } from './half-open-probes';
export type { OpossumCircuit } from './opossum-engine';
export type { BreakerRules } from './breaker-rules';
export type { SlowCallRule } from './slow-call-rule';

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

/**
 * A circuit breaker. It counts failures of kind `transient` and `timeout` only. An attempt
 * `stopped` (its caller left, a hedge answered first, shutdown) is neither a success nor a
 * failure: it is not counted, opens and closes nothing, and when it was the half-open probe the
 * next call probes instead. Any other outcome (a 4xx, a refused destination) shows the dependency
 * answered: a success as far as it knows, as resilience4j treats exceptions it does not record.
 * Once its rolling window (10 buckets of `rollingCountTimeoutMs / 10`) holds `volumeThreshold`
 * attempts that ended and more than `errorThresholdPercentage` of them failed, it opens: it
 * refuses with `circuit_open` and a Retry-After of the time until it half-opens, its open time
 * after it opened. Half open, it lets `halfOpenProbes` probes through (one by default): a counted
 * failure opens it again, a success or a 4xx each fill one probe's part and close it with an
 * empty window once all have, a `stopped` probe leaves it half open with its slot free. Every
 * attempt that ends while it is half open counts so, a probe or an older one.
 *
 * Opt-in, as resilience4j has them: slow calls ({@link SlowCallRule}: a slow success half open
 * is a failed probe) and an open time that backs off ({@link OpenTime}). Shared by tenants, it
 * tells one tenant's failures from the dependency's ({@link TenantBlame}, {@link BlameRule}).
 *
 * Its state is one {@link BreakerPhase}, owned by its {@link BreakerState} (breaker-state.ts),
 * which only it moves. Its {@link BreakerEngine} (opossum, opossum-engine.ts) counts into the
 * window, opens on failures and half-opens after the open time; everything else is decided here
 * and in {@link BreakerOutcomes} (how each attempt's end moves it): who is refused (before the
 * engine would be asked, so a refusal is a `circuit_open` ResilienceError with its Retry-After),
 * who probes, when it closes, opening on slow calls, the open time, holding it open for
 * operators, and its reported changes of state.
 *
 * Time: the window moves on the injected clock, lazily, and the Retry-After is measured on it
 * from when it opened. The open → half-open timer is the engine's (opossum's own `setTimeout`,
 * unref'd, cleared by {@link shutdown}); tests move it with jest's fake timers and the injected
 * FakeClock with it (test/support/fake-timers.ts).
 *
 * An operator's {@link forceOpen} opens the engine too, and keeps it open: when the engine's
 * timer half-opens it, this opens it again at once (listeners of {@link circuit} get that `open`
 * before the `halfOpen`; {@link onStateChange} reports neither).
 */
export class Breaker {
  private readonly engine: BreakerEngine;
  private readonly opossum: OpossumCircuit;
  private readonly window: RollingWindow;
  private readonly machine: BreakerState;
  private readonly outcomes: BreakerOutcomes;
  private readonly events = new BreakerEvents();
  private readonly tenants: TenantCircuits;
  private readonly blame: TenantBlame;
  private readonly openTime: OpenTime;
  /** Undefined when no call is ever slow: attempts are then not measured. */
  private readonly slowCalls: SlowCallRule | undefined;

  /** The settings it was given, with the defaults of those left out. */
  readonly settings: Readonly<FullBreakerSettings>;

  constructor(
    readonly name: string,
    given: Readonly<BreakerSettings>,
    private readonly clock: Clock,
    rules: Readonly<BreakerRules> = {},
  ) {
    const settings = breakerSettings(given);
    this.settings = settings;
    checkBreakerSettings(name, settings, BUCKETS);
    const { slowCalls, blame } = breakerRules(settings, rules);
    this.slowCalls = slowCalls;
    this.window = new RollingWindow(clock, settings.rollingCountTimeoutMs, BUCKETS);
    this.tenants = new TenantCircuits(settings, clock);
    this.blame = new TenantBlame(this.window, this.tenants, blame);
    this.machine = new BreakerState(clock, settings.halfOpenProbes, this.tenants, this.events);
    this.openTime = new OpenTime(settings);
    const { window, tenants, machine: state, events, openTime } = this;
    this.outcomes = new BreakerOutcomes({
      state,
      window,
      tenants,
      blame: this.blame,
      events,
      openTime,
      slowCalls,
      clock,
    });
    const engine = new OpossumEngine(name, window, settings, this.outcomes);
    this.outcomes.engine = engine;
    this.engine = engine;
    this.opossum = engine.circuit;
  }

  /**
   * The opossum circuit of its engine, for its events (`open`, `halfOpen`, `close`, `success`,
   * `failure`...) and its `stats` (a `stopped` attempt's end is a `success` event to opossum, as
   * a 4xx is). Fire calls through {@link fire}, and open or close through {@link forceOpen} and
   * {@link close}: calls fired on the circuit itself are not the breaker's.
   */
  get circuit(): OpossumCircuit {
    return this.opossum;
  }

  get state(): CircuitState {
    return this.machine.circuitState;
  }

  /**
   * The `circuit_open` error a call would get now, or undefined when it may go through. With a
   * `tenant`, also when that tenant is refused on its own; with `timeoutShortened`, also when
   * the call would be a probe ({@link FireOptions}). A tenant refused because the circuit is
   * open is remembered as waiting for it ({@link HalfOpenSuspect}).
   */
  refusal(tenant?: string, timeoutShortened = false): ResilienceError | undefined {
    const phase = this.machine.phase;
    if (phase.name === 'stopped') return undefined;
    if (tenant !== undefined) {
      const ownMs = this.tenants.refusalMs(tenant);
      if (ownMs !== undefined) {
        return this.openError('for this tenant: its own calls kept failing while the others succeeded', ownMs);
      }
      if (timeoutShortened && this.tenants.open.has(tenant)) return this.shortenedProbeError();
    }
    if (phase.name === 'closed') return undefined;
    if (phase.name === 'open' && phase.heldByOperator) {
      return this.openError('an operator opened it', this.settings.resetTimeoutMs);
    }
    if (phase.name === 'half_open' && phase.probes.free) {
      return timeoutShortened ? this.shortenedProbeError() : undefined;
    }
    // Remembered as waiting for the dependency: another tenant's failure half open may be its own.
    if (tenant !== undefined) phase.suspect.waiting(tenant);
    if (phase.name === 'half_open') {
      const probes = this.settings.halfOpenProbes;
      return this.openError(
        probes === 1 ? 'its one probe is in flight' : `its ${probes} probes are in flight`,
        PROBE_RETRY_AFTER_MS,
      );
    }
    const untilHalfOpen = phase.openedAt + this.openTime.ms - this.clock.now();
    return this.openError('the dependency keeps failing', Math.max(1, Math.ceil(untilHalfOpen)));
  }

  /**
   * Runs `action` as one attempt the breaker watches, or refuses it with `circuit_open`. With a
   * `tenant`, its outcome is also that tenant's, so that one tenant's failures can be told from
   * the dependency's ({@link TenantBlame}).
   */
  fire<T>(action: () => Promise<T>, tenant?: string, options?: FireOptions): Promise<T> {
    const phase = this.machine.phase;
    if (phase.name === 'stopped') return action();
    const shortened = options?.timeoutShortened === true;
    const refusal = this.refusal(tenant, shortened);
    if (refusal) return Promise.reject(refusal);
    // Let through half open: a probe.
    const probes = phase.name === 'half_open' ? phase.probes : undefined;
    const slowCalls = this.slowCalls;
    if (shortened) shortenedAttempts.add(action);
    if (tenant === undefined && probes === undefined && slowCalls === undefined) {
      return this.engine.fire(action) as Promise<T>;
    }
    if (tenant !== undefined) {
      this.tenants.takeProbe(tenant, action);
      tenantOf.set(action, tenant);
    }
    probes?.take(action);
    const startedAt = slowCalls !== undefined ? this.clock.now() : 0;
    const fired = this.engine.fire(action) as Promise<T>;
    if (tenant === undefined && slowCalls === undefined) return fired;
    // Failures reach the blame through the engine, in time for its decision; the rest here.
    fired.then(
      () => this.outcomes.ended(action, tenant, startedAt, 'succeeded'),
      (error: unknown) =>
        this.outcomes.ended(action, tenant, startedAt, shortened && isTimeout(error) ? 'stopped' : endingOf(error)),
    );
    return fired;
  }

  /**
   * The breaker now. With `viewer`, `tenantsOpen` holds that tenant alone, if it is refused on
   * its own: which other tenants are, and when they may call again, is theirs.
   */
  snapshot(viewer?: string): CircuitSnapshot {
    const state = this.machine.circuitState;
    if (this.machine.phase.name === 'stopped') return { state, failures: 0, successes: 0, tenantsOpen: [] };
    this.window.moveOn();
    const tenantsOpen = this.openTenants(viewer);
    const snapshot: CircuitSnapshot = {
      state,
      failures: this.window.failures,
      successes: this.window.successes,
      tenantsOpen,
    };
    if (this.slowCalls !== undefined) snapshot.slowCalls = this.window.slow;
    if (this.settings.backoffMultiplier > 1) snapshot.openTimeMs = this.openTime.ms;
    return snapshot;
  }

  /** Tenants refused on their own (their probe out included), at most {@link SNAPSHOT_TENANTS}; or `only` if it is. */
  private openTenants(only?: string): CircuitSnapshot['tenantsOpen'] {
    const tenants = only === undefined ? this.tenants.open.keys() : this.tenants.open.has(only) ? [only] : [];
    const open: CircuitSnapshot['tenantsOpen'] = [];
    for (const tenant of tenants) {
      if (open.length === SNAPSHOT_TENANTS) break;
      open.push({ tenant, retryAfterMs: this.tenants.refusalMs(tenant) ?? 0 });
    }
    return open;
  }

  /** Tenants refused on their own now (their probe out included). */
  get tenantsOpen(): number {
    let open = 0;
    for (const tenant of this.tenants.open.keys()) if (this.tenants.refusalMs(tenant) !== undefined) open++;
    return open;
  }

  /** Calls `listener` with each tenant refused on its own; returns a function that removes it. */
  onTenantOpen(listener: (tenant: string) => void): () => void {
    return this.tenants.onOpen(listener);
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
    if (this.machine.phase.name === 'stopped') return;
    this.machine.open(true);
    this.engine.open();
  }

  /** For operators: close now with an empty window, whatever the state. */
  close(): void {
    const phase = this.machine.phase;
    if (phase.name === 'stopped') return;
    this.blame.clear();
    // A closing engine empties the window itself; one already closed does not close again.
    if (phase.name === 'closed') this.window.clear();
    else this.engine.close();
  }

  /** Calls `listener` on every change of state; returns a function that removes it. */
  onStateChange(listener: CircuitStateListener): () => void {
    return this.events.onStateChange(listener);
  }

  /** Clears the engine's timer; the breaker refuses nothing and counts nothing after. */
  shutdown(): void {
    this.machine.stop();
    this.engine.shutdown();
    this.events.clear();
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
}
