import type { Clock } from '../common';
import { countsAgainstBreaker, type Ending, isStopped, isTimeout } from './attempt-outcome';
import type { Attempt, BreakerEngine, EngineListener, RejectionVerdict } from './breaker-engine';
import type { BreakerEvents } from './breaker-events';
import type { HalfOpenPhase } from './breaker-phase';
import type { BreakerState } from './breaker-state';
import type { OpenTime } from './open-time';
import type { RollingWindow } from './rolling-window';
import type { SlowCallRule } from './slow-call-rule';
import type { TenantBlame } from './tenant-blame';
import type { TenantCircuits } from './tenant-circuits';

/** The tenant of each attempt fired with one, for the engine's failure report (which hands back the attempt). */
export const tenantOf = new WeakMap<Attempt, string>();
/** Attempts whose caller shortened their timeout (FireOptions), for the judgement of their end. */
export const shortenedAttempts = new WeakSet<Attempt>();

/** What a breaker's outcomes are made of, besides its engine. */
export interface BreakerParts {
  readonly state: BreakerState;
  readonly window: RollingWindow;
  readonly tenants: TenantCircuits;
  readonly blame: TenantBlame;
  readonly events: BreakerEvents;
  readonly openTime: OpenTime;
  readonly slowCalls: SlowCallRule | undefined;
  readonly clock: Clock;
}

/**
 * How the end of each attempt moves a breaker: what it answers its engine, as the engine counts
 * it (and opens or half-opens), and what it does once the attempt's promise settled (slowness,
 * tenants). Half open, it decides who probed and how it came out: a counted failure or a slow
 * probe opens again, for longer when it backs off; `halfOpenProbes` successes close; a `stopped`
 * probe frees its slot; a tenant's own failure is that tenant's alone (half-open-suspect.ts).
 */
export class BreakerOutcomes implements EngineListener {
  /** Set once, right after the engine is made with this as its listener. */
  engine!: BreakerEngine;

  constructor(private readonly parts: BreakerParts) {}

  /**
   * How a rejected attempt counts: `stopped` also for a `timeout` its caller chose, and
   * `own_failure` for a tenant's own failure while half open.
   */
  judge(error: unknown, attempt: Attempt): RejectionVerdict {
    if (!countsAgainstBreaker(error)) return isStopped(error) ? 'stopped' : 'answered';
    if (shortenedAttempts.has(attempt) && isTimeout(error)) return 'stopped';
    const phase = this.parts.state.phase;
    if (phase.name === 'half_open' && this.ownHalfOpenFailure(attempt, phase)) return 'own_failure';
    return 'failure';
  }

  countedFailure(attempt: Attempt): void {
    const halfOpen = this.parts.state.phase.name === 'half_open';
    // Half open, the engine opens again on any counted failure: for longer, when it backs off.
    if (halfOpen) this.probeFailed('failed');
    const tenant = tenantOf.get(attempt);
    if (tenant !== undefined) this.parts.blame.failed(tenant, halfOpen);
  }

  succeeded(): void {
    const phase = this.parts.state.phase;
    // Measuring slowness, a half-open success is judged once its duration is known (ended).
    if (phase.name === 'half_open' && this.parts.slowCalls === undefined) this.probeSucceeded(phase);
  }

  /** Only a probe's own end frees its slot: an older attempt's ends while the probes are out. */
  uncounted(attempt: Attempt, verdict: 'stopped' | 'own_failure'): void {
    const phase = this.parts.state.phase;
    if (phase.name === 'half_open' && phase.probes.stopped(attempt)) {
      this.parts.events.probe(verdict === 'stopped' ? 'stopped' : 'failed');
    }
  }

  opened(): void {
    this.parts.state.open(false);
  }

  halfOpened(): void {
    // Held open by an operator: open again at once.
    if (!this.parts.state.halfOpen()) this.engine.open();
  }

  closed(): void {
    // Reset before the change is reported: its listeners see the open time it will have.
    this.engine.setOpenTime(this.parts.openTime.reset());
    this.parts.state.close();
  }

  /**
   * The end of an attempt fired with a tenant or measured for slowness, once its promise
   * settled: after the engine counted it (and opened or closed on it).
   */
  ended(attempt: Attempt, tenant: string | undefined, startedAt: number, ending: Ending): void {
    const { slowCalls, blame, clock } = this.parts;
    const slow = slowCalls !== undefined && ending !== 'stopped' && slowCalls.isSlow(clock.now() - startedAt);
    // A tenant refused on its own whose probe was slow is refused again: the slowness is its own.
    let ownSlowness = false;
    if (tenant !== undefined) {
      if (ending === 'succeeded') {
        ownSlowness = slow && blame.slowProbe(tenant);
        if (!ownSlowness) blame.succeeded(tenant);
      } else if (ending === 'stopped') blame.stopped(tenant, attempt);
      else if (ending === 'answered') blame.answered(tenant, attempt);
    }
    if (slowCalls === undefined || ending === 'stopped') return;
    if (slow) this.parts.events.slowCall();
    const phase = this.parts.state.phase;
    if (phase.name === 'half_open') {
      // A counted failure opened it already; anything else is judged by its duration, whoever
      // sent it (while half open, the shared probe decides, as for failures).
      if (ending === 'failed') return;
      if (slow) this.probeFailed('slow');
      else this.probeSucceeded(phase);
      return;
    }
    if (!slow || ownSlowness) return;
    this.parts.window.countSlow();
    if (tenant !== undefined) blame.slow(tenant);
    if (this.parts.state.phase.name === 'closed' && slowCalls.trips(this.parts.window)) this.engine.open();
  }

  /** A counted failure while half open that is its tenant's own: that tenant is refused alone. */
  private ownHalfOpenFailure(attempt: Attempt, phase: HalfOpenPhase): boolean {
    const tenant = tenantOf.get(attempt);
    const refusedAlone = tenant !== undefined && this.parts.tenants.open.has(tenant);
    if (!phase.suspect.ownFailure(tenant, refusedAlone)) return false;
    this.parts.blame.failedOwn(tenant!);
    return true;
  }

  /** A success while half open: closes once `halfOpenProbes` of them came. */
  private probeSucceeded(phase: HalfOpenPhase): void {
    this.parts.events.probe('succeeded');
    if (phase.probes.success()) this.engine.close();
  }

  /**
   * A counted failure (the engine opens on it) or a slow success (this opens it) while half
   * open: it opens again, for longer when it backs off.
   */
  private probeFailed(outcome: 'failed' | 'slow'): void {
    this.parts.events.probe(outcome);
    this.engine.setOpenTime(this.parts.openTime.grow());
    if (outcome === 'slow') this.engine.open();
  }
}
