import type { Clock } from '../common';
import { type FullBreakerSettings, maxResetTimeoutMs } from './breaker-settings';
import type { RollingWindow } from './rolling-window';
import { TenantOutcomes, type TenantTotals } from './tenant-outcomes';

/** Tenants whose outcomes one breaker tracks at most; beyond, new tenants count as shared only. */
const MAX_TRACKED_TENANTS = 1_000;
/** Retry-After while a tenant's one probe is out. */
const PROBE_RETRY_AFTER_MS = 1_000;

/** A tenant a breaker refuses on its own, while it lets the others through. */
export interface TenantCircuit {
  /** When it opened (the injected clock). */
  openedAt: number;
  /** Until when it refuses; then one probe goes through. */
  until: number;
  /** Its one probe (the attempt), while it is out. */
  probe: object | undefined;
  /** How long it was refused for last: `resetTimeoutMs`, grown by each failed probe as the breaker's is. */
  openMs: number;
}

/**
 * Tells one tenant's failures from the dependency's, for one breaker shared by every tenant.
 *
 * The rule: when a counted failure would open the breaker (or would without the failing
 * tenant's own 4xx answers, which pad nobody's failures), take the tenant with the most
 * failures in the window. If its own calls fail past the error threshold (counting its real
 * successes only: neither its 4xx answers nor its stopped calls dilute its share), and the
 * others' calls in the window (everything but that tenant's) succeed (at least one did, and at
 * most half the error threshold of them failed), the failures are that tenant's own: it alone
 * is refused (`circuit_open` for it, for `resetTimeoutMs`, then one probe of its own), its
 * outcomes are taken out of the shared window, and the breaker stays closed for everyone else.
 * Otherwise the dependency is failing (the failures are spread over tenants, or nobody else
 * succeeded) and the breaker opens for all, as it would without tenants. A second failing
 * tenant is found the same way at a later trip, once the first is out of the window.
 *
 * A refused tenant is served again only after a real success of its own: a probe that fails is
 * refused again, for `resetTimeoutMs` times `backoffMultiplier` more each time (up to
 * `maxResetTimeoutMs`), as the shared breaker's open time grows; one stopped, or answered with an error that does not count
 * (a 4xx), leaves it refused with its probe slot free, so its next call probes.
 *
 * Slow calls follow the same rule, when the breaker counts them (`slowCallDurationMs`): when a
 * slow call would open the breaker on the slow-call rate, the tenant with the most slow calls in
 * the window is blamed alone if more than `slowCallRatePercentage` of its own calls were slow
 * while the others' were fast (at least one was, and at most half that rate of them were slow).
 * A refused tenant's probe that succeeds but slowly refuses it again.
 *
 * A tenant alone on a dependency is never blamed: with no one else's success there is nothing
 * to tell it from the dependency by (its 4xx answers, successes in the shared window, are its
 * own, not the others'). While the shared breaker is half open, the first tenant whose attempt
 * fails is refused alone and a second tenant's failure opens it for all (half-open-suspect.ts).
 */
export class TenantBlame {
  private readonly outcomes = new Map<string, TenantOutcomes>();
  private readonly circuits = new Map<string, TenantCircuit>();
  private readonly opened: Array<(tenant: string) => void> = [];
  /** The bucket the tracked tenants were last swept in: at most one sweep a bucket. */
  private sweptIn = -1;

  constructor(
    private readonly window: RollingWindow,
    private readonly settings: Readonly<FullBreakerSettings>,
    private readonly clock: Clock,
  ) {}

  /** Tenants refused on their own now (or probing), by name. */
  get open(): ReadonlyMap<string, TenantCircuit> {
    return this.circuits;
  }

  /**
   * How long `tenant` is refused for, or undefined when its call may go through. A tenant whose
   * time is up may send one probe: {@link takeProbe} takes it.
   */
  refusalMs(tenant: string): number | undefined {
    if (this.circuits.size === 0) return undefined;
    const circuit = this.circuits.get(tenant);
    if (!circuit) return undefined;
    const leftMs = circuit.until - this.clock.now();
    if (leftMs > 0) return Math.ceil(leftMs);
    return circuit.probe !== undefined ? PROBE_RETRY_AFTER_MS : undefined;
  }

  /** `attempt` of `tenant` goes through: if its own circuit's time is up, it is its probe. */
  takeProbe(tenant: string, attempt: object): void {
    const circuit = this.circuits.size === 0 ? undefined : this.circuits.get(tenant);
    if (circuit && circuit.until <= this.clock.now()) circuit.probe = attempt;
  }

  /**
   * `tenant`'s attempt succeeded, but slowly: if the tenant is refused on its own and probing,
   * that was its probe's answer, and it is refused again (true), the slowness its own.
   */
  slowProbe(tenant: string): boolean {
    const circuit = this.circuits.size === 0 ? undefined : this.circuits.get(tenant);
    if (circuit?.probe === undefined) return false;
    this.refuse(tenant, true);
    return true;
  }

  /**
   * A slow attempt of `tenant`, its outcome recorded already and its slowness counted in the
   * shared window: blames the tenant whose own slowness this is (see the class), before the
   * breaker reads the window.
   */
  slow(tenant: string): void {
    const serial = this.window.serial;
    this.track(tenant)?.record(serial, 'slow');
    const { failures, successes } = this.window.stats;
    const ended = failures + successes;
    if (ended < this.settings.volumeThreshold || !this.slowPastThreshold(this.window.slow, ended)) return;
    const blamed = this.blameSlow(serial, this.window.slow, ended);
    if (blamed !== undefined) this.blameOn(blamed, serial);
  }

  /** A real success of `tenant` (the action resolved). */
  succeeded(tenant: string): void {
    const circuit = this.circuits.size === 0 ? undefined : this.circuits.get(tenant);
    // Its probe came back well: it is served like everyone again.
    if (circuit?.probe !== undefined) this.circuits.delete(tenant);
    this.track(tenant)?.record(this.window.serial, 'succeeded');
  }

  /**
   * `attempt` of `tenant` ended with an error that does not count (a 4xx): a success in the
   * shared window, since the dependency answered, but not one of the tenant's own.
   */
  answered(tenant: string, attempt: object): void {
    this.endProbe(tenant, attempt);
    this.track(tenant)?.record(this.window.serial, 'answered');
  }

  /** `attempt` of `tenant` was stopped: it counts nowhere. */
  stopped(tenant: string, attempt: object): void {
    this.endProbe(tenant, attempt);
  }

  /**
   * A counted failure of `tenant`, already in the shared window: blames the tenants whose own
   * failures these are (see the class), before the breaker reads the window.
   */
  failed(tenant: string, halfOpen: boolean): void {
    const circuit = this.circuits.size === 0 ? undefined : this.circuits.get(tenant);
    if (circuit?.probe !== undefined) {
      // Its own probe failed: refused again, and the failure was never the dependency's.
      this.window.forget(0, 1, 0);
      this.refuse(tenant, true);
      return;
    }
    const serial = this.window.serial;
    const own = this.track(tenant);
    own?.record(serial, 'failed');
    if (halfOpen) return;
    const { failures, successes } = this.window.stats;
    if (!this.wouldOpen(failures, successes)) {
      // It might open but for this tenant's 4xx answers.
      const answered = own ? own.answered(serial) : 0;
      if (answered === 0 || !this.wouldOpen(failures, successes - answered)) return;
    }
    const blamed = this.blame(serial, failures, successes);
    if (blamed !== undefined) this.blameOn(blamed, serial);
  }

  /**
   * A counted failure of `tenant` while the shared breaker is half open, found to be the
   * tenant's own (half-open-suspect.ts), so kept out of the shared window: refuses it alone,
   * for longer when it was its own probe that failed. One refused already with no probe out (an
   * older attempt failing) stays refused as it was.
   */
  failedOwn(tenant: string): void {
    const circuit = this.circuits.get(tenant);
    if (circuit && circuit.probe === undefined) return;
    this.refuse(tenant, circuit !== undefined);
  }

  /** Serves `tenant` again: it was refused alone on a failure that proved the dependency's. */
  forgive(tenant: string): void {
    this.circuits.delete(tenant);
  }

  /** Calls `listener` with each tenant refused on its own; returns a function that removes it. */
  onOpen(listener: (tenant: string) => void): () => void {
    this.opened.push(listener);
    return () => {
      const index = this.opened.indexOf(listener);
      if (index !== -1) this.opened.splice(index, 1);
    };
  }

  /** Forgets every tenant: the breaker was closed by an operator or is shutting down. */
  clear(): void {
    this.outcomes.clear();
    this.circuits.clear();
  }

  /**
   * The tenant to blame for the window's failures: the one with the most, if its own calls fail
   * past the threshold (its real successes only diluting them) and, without them, the window has
   * a success and would not open. None when the failures are spread over several tenants: that
   * is the dependency failing.
   */
  private blame(serial: number, failures: number, successes: number): string | undefined {
    let worst: ({ tenant: string } & TenantTotals) | undefined;
    for (const [tenant, outcomes] of this.outcomes) {
      const totals = outcomes.totals(serial);
      if (totals.failures + totals.successes + totals.answered === 0) this.outcomes.delete(tenant);
      else if (totals.failures > (worst?.failures ?? 0)) worst = { tenant, ...totals };
    }
    if (!worst || !this.failsPastThreshold(worst.failures, worst.successes)) return undefined;
    // Only its 4xx answers (successes in the shared window, not its own) may keep it from opening.
    const withoutItsAnswers = successes - worst.answered;
    if (!this.wouldOpen(failures, successes) && !this.wouldOpen(failures, withoutItsAnswers)) return undefined;
    const othersFailed = failures - worst.failures;
    // Everything it added to the shared window is its own, its 4xx answers counted there included.
    const othersSucceeded = successes - worst.successes - worst.answered;
    // The others' calls succeed: at most half the error threshold of them failed.
    const othersFailedPercent = (othersFailed / (othersFailed + othersSucceeded)) * 100;
    if (othersSucceeded < 1 || othersFailedPercent > this.settings.errorThresholdPercentage / 2) return undefined;
    return worst.tenant;
  }

  /**
   * The tenant to blame for the window's slow calls: the one with the most, if more than the
   * slow-call rate of its own calls were slow and the others' calls were fast (see the class).
   */
  private blameSlow(serial: number, slow: number, ended: number): string | undefined {
    let worst: ({ tenant: string } & TenantTotals) | undefined;
    for (const [tenant, outcomes] of this.outcomes) {
      const totals = outcomes.totals(serial);
      if (totals.failures + totals.successes + totals.answered === 0) this.outcomes.delete(tenant);
      else if (totals.slow > (worst?.slow ?? 0)) worst = { tenant, ...totals };
    }
    if (!worst) return undefined;
    const own = worst.failures + worst.successes + worst.answered;
    if (!this.slowPastThreshold(worst.slow, own)) return undefined;
    const othersSlow = slow - worst.slow;
    const others = ended - own;
    if (others - othersSlow < 1 || (othersSlow / others) * 100 > this.settings.slowCallRatePercentage / 2) {
      return undefined;
    }
    return worst.tenant;
  }

  private slowPastThreshold(slow: number, ended: number): boolean {
    return ended > 0 && (slow / ended) * 100 > this.settings.slowCallRatePercentage;
  }

  /** Takes `tenant`'s outcomes out of the shared window and refuses it on its own. */
  private blameOn(tenant: string, serial: number): void {
    this.outcomes
      .get(tenant)
      ?.forEach(serial, (age, failed, succeeded, answered, slow) =>
        this.window.forget(age, failed, succeeded + answered, slow),
      );
    this.outcomes.delete(tenant);
    this.refuse(tenant, false);
  }

  private wouldOpen(failures: number, successes: number): boolean {
    return failures + successes >= this.settings.volumeThreshold && this.failsPastThreshold(failures, successes);
  }

  private failsPastThreshold(failures: number, successes: number): boolean {
    const total = failures + successes;
    return total > 0 && (failures / total) * 100 > this.settings.errorThresholdPercentage;
  }

  /** Refuses `tenant` on its own from now; for longer than last time when its probe failed. */
  private refuse(tenant: string, probeFailed: boolean): void {
    const now = this.clock.now();
    if (this.circuits.size >= MAX_TRACKED_TENANTS) {
      // Tenants that never came back for their probe.
      for (const [name, circuit] of this.circuits)
        if (circuit.probe === undefined && circuit.until <= now) this.circuits.delete(name);
    }
    const known = this.circuits.get(tenant);
    const { resetTimeoutMs, backoffMultiplier } = this.settings;
    const openMs =
      known && probeFailed
        ? Math.min(known.openMs * backoffMultiplier, maxResetTimeoutMs(this.settings))
        : resetTimeoutMs;
    this.circuits.set(tenant, { openedAt: known?.openedAt ?? now, until: now + openMs, probe: undefined, openMs });
    if (!known) for (const listener of this.opened) listener(tenant);
  }

  /** Frees `tenant`'s probe slot if `attempt` was its probe: it stays refused, and its next call probes. */
  private endProbe(tenant: string, attempt: object): void {
    const circuit = this.circuits.size === 0 ? undefined : this.circuits.get(tenant);
    if (circuit?.probe === attempt) circuit.probe = undefined;
  }

  /** The tenant's outcomes, made on first use while fewer than the bound are tracked. */
  private track(tenant: string): TenantOutcomes | undefined {
    let outcomes = this.outcomes.get(tenant);
    if (outcomes) return outcomes;
    if (this.outcomes.size >= MAX_TRACKED_TENANTS) {
      // With more active tenants than the bound none is idle: sweeping on every call of an
      // untracked one would walk them all each time. Once a bucket is enough (an idle tenant
      // then leaves at most a bucket late).
      const serial = this.window.serial;
      if (serial !== this.sweptIn) {
        this.sweptIn = serial;
        this.dropIdle();
      }
      if (this.outcomes.size >= MAX_TRACKED_TENANTS) return undefined;
    }
    outcomes = new TenantOutcomes(this.window.buckets);
    this.outcomes.set(tenant, outcomes);
    return outcomes;
  }

  private dropIdle(): void {
    const serial = this.window.serial;
    for (const [tenant, outcomes] of this.outcomes) {
      const { failures, successes, answered } = outcomes.totals(serial);
      if (failures + successes + answered === 0) this.outcomes.delete(tenant);
    }
  }
}
