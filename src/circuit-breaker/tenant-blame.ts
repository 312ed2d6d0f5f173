import type { Clock } from '../common';
import type { BreakerSettings } from './breaker-settings';
import type { RollingWindow } from './rolling-window';

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
  /** Its one probe is out. */
  probing: boolean;
}

/** One tenant's outcomes in a breaker's window, bucket by bucket, on the window's serials. */
class TenantOutcomes {
  private readonly serials: number[];
  private readonly failuresIn: number[];
  private readonly successesIn: number[];

  constructor(private readonly buckets: number) {
    this.serials = new Array<number>(buckets).fill(-buckets);
    this.failuresIn = new Array<number>(buckets).fill(0);
    this.successesIn = new Array<number>(buckets).fill(0);
  }

  record(serial: number, failed: boolean): void {
    const slot = serial % this.buckets;
    if (this.serials[slot] !== serial) {
      this.serials[slot] = serial;
      this.failuresIn[slot] = 0;
      this.successesIn[slot] = 0;
    }
    if (failed) this.failuresIn[slot]++;
    else this.successesIn[slot]++;
  }

  /** Calls `each` with every bucket still in the window: its age (0: now) and its counts. */
  forEach(serial: number, each: (age: number, failures: number, successes: number) => void): void {
    for (let slot = 0; slot < this.buckets; slot++) {
      const age = serial - this.serials[slot];
      if (age >= 0 && age < this.buckets) each(age, this.failuresIn[slot], this.successesIn[slot]);
    }
  }

  totals(serial: number): { failures: number; successes: number } {
    let failures = 0;
    let successes = 0;
    this.forEach(serial, (_age, failed, succeeded) => {
      failures += failed;
      successes += succeeded;
    });
    return { failures, successes };
  }
}

/**
 * Tells one tenant's failures from the dependency's, for one breaker shared by every tenant.
 *
 * The rule: when a counted failure would open the breaker, take the tenant with the most
 * failures in the window. If its own calls fail past the error threshold, and the others' calls
 * in the window (everything but that tenant's) succeed (at least one did, and at most half the
 * error threshold of them failed), the failures are that tenant's own: it alone is refused (`circuit_open` for it,
 * for `resetTimeoutMs`, then one probe of its own), its outcomes are taken out of the shared
 * window, and the breaker stays closed for everyone else. Otherwise the dependency is failing
 * (the failures are spread over tenants, or nobody else succeeded) and the breaker opens for
 * all, as it would without tenants. A second failing tenant is found the same way at a later
 * trip, once the first is out of the window.
 *
 * A tenant alone on a dependency is never blamed: with no one else's success there is nothing
 * to tell it from the dependency by. While the shared breaker is half open its probe decides,
 * whoever sent it.
 */
export class TenantBlame {
  private readonly outcomes = new Map<string, TenantOutcomes>();
  private readonly circuits = new Map<string, TenantCircuit>();
  private readonly opened: Array<(tenant: string) => void> = [];
  /** The bucket the tracked tenants were last swept in: at most one sweep a bucket. */
  private sweptIn = -1;

  constructor(
    private readonly window: RollingWindow,
    private readonly settings: Readonly<BreakerSettings>,
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
    return circuit.probing ? PROBE_RETRY_AFTER_MS : undefined;
  }

  /** A call of `tenant` goes through: if its own circuit's time is up, this call is its probe. */
  takeProbe(tenant: string): void {
    const circuit = this.circuits.size === 0 ? undefined : this.circuits.get(tenant);
    if (circuit && circuit.until <= this.clock.now()) circuit.probing = true;
  }

  /** An outcome of `tenant` that does not count against the breaker (or a success). */
  succeeded(tenant: string): void {
    const circuit = this.circuits.size === 0 ? undefined : this.circuits.get(tenant);
    // Its probe came back well: it is served like everyone again.
    if (circuit?.probing) this.circuits.delete(tenant);
    this.track(tenant)?.record(this.window.serial, false);
  }

  /**
   * A counted failure of `tenant`, already in the shared window: blames the tenants whose own
   * failures these are (see the class), before the breaker reads the window.
   */
  failed(tenant: string, halfOpen: boolean): void {
    const circuit = this.circuits.size === 0 ? undefined : this.circuits.get(tenant);
    if (circuit?.probing) {
      // Its own probe failed: refused again, and the failure was never the dependency's.
      this.window.forget(0, 1, 0);
      this.refuse(tenant);
      return;
    }
    const serial = this.window.serial;
    this.track(tenant)?.record(serial, true);
    if (halfOpen) return;
    const { failures, successes } = this.window.stats;
    if (!this.wouldOpen(failures, successes)) return;
    const blamed = this.blame(serial, failures, successes);
    if (blamed === undefined) return;
    this.outcomes.get(blamed)?.forEach(serial, (age, failed, succeeded) => this.window.forget(age, failed, succeeded));
    this.outcomes.delete(blamed);
    this.refuse(blamed);
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
   * past the threshold and, without them, the window has a success and would not open. None when
   * the failures are spread over several tenants: that is the dependency failing.
   */
  private blame(serial: number, failures: number, successes: number): string | undefined {
    let worst: { tenant: string; failures: number; successes: number } | undefined;
    for (const [tenant, outcomes] of this.outcomes) {
      const totals = outcomes.totals(serial);
      if (totals.failures + totals.successes === 0) this.outcomes.delete(tenant);
      else if (totals.failures > (worst?.failures ?? 0)) worst = { tenant, ...totals };
    }
    if (!worst || !this.failsPastThreshold(worst.failures, worst.successes)) return undefined;
    const othersFailed = failures - worst.failures;
    const othersSucceeded = successes - worst.successes;
    // The others' calls succeed: at most half the error threshold of them failed.
    const othersFailedPercent = (othersFailed / (othersFailed + othersSucceeded)) * 100;
    if (othersSucceeded < 1 || othersFailedPercent > this.settings.errorThresholdPercentage / 2) return undefined;
    return worst.tenant;
  }

  private wouldOpen(failures: number, successes: number): boolean {
    return failures + successes >= this.settings.volumeThreshold && this.failsPastThreshold(failures, successes);
  }

  private failsPastThreshold(failures: number, successes: number): boolean {
    const total = failures + successes;
    return total > 0 && (failures / total) * 100 > this.settings.errorThresholdPercentage;
  }

  private refuse(tenant: string): void {
    const now = this.clock.now();
    if (this.circuits.size >= MAX_TRACKED_TENANTS) {
      // Tenants that never came back for their probe.
      for (const [name, circuit] of this.circuits)
        if (!circuit.probing && circuit.until <= now) this.circuits.delete(name);
    }
    const known = this.circuits.get(tenant);
    this.circuits.set(tenant, {
      openedAt: known?.openedAt ?? now,
      until: now + this.settings.resetTimeoutMs,
      probing: false,
    });
    if (!known) for (const listener of this.opened) listener(tenant);
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
      const { failures, successes } = outcomes.totals(serial);
      if (failures + successes === 0) this.outcomes.delete(tenant);
    }
  }
}
