import type { RollingWindow } from './rolling-window';
import { type TenantOutcome, TenantOutcomes, type TenantTotals } from './tenant-outcomes';

/** Tenants whose outcomes one breaker tracks at most; beyond, new tenants count as shared only. */
const MAX_TRACKED_TENANTS = 1_000;

/** A tenant and what its attempts in the window came to. */
export type TenantTally = { tenant: string } & TenantTotals;

/**
 * What each tenant's attempts in one breaker's window came to, on the window's buckets: what a
 * blame rule reads. Bounded: {@link MAX_TRACKED_TENANTS}, idle tenants dropped to make room.
 */
export class TenantTallies {
  private readonly outcomes = new Map<string, TenantOutcomes>();
  /** The bucket the tracked tenants were last swept in: at most one sweep a bucket. */
  private sweptIn = -1;

  constructor(private readonly window: RollingWindow) {}

  /** Records how an attempt of `tenant` ended (or that it was slow besides), if it is tracked or room is left. */
  record(tenant: string, outcome: TenantOutcome): void {
    this.track(tenant)?.record(this.window.serial, outcome);
  }

  /** `tenant`'s 4xx answers still in the window: on every counted failure, so no object and no closure. */
  answered(tenant: string): number {
    const outcomes = this.outcomes.get(tenant);
    return outcomes ? outcomes.answered(this.window.serial) : 0;
  }

  /** The tenant with the most `by` in the window (dropping the idle ones on the way), if any has one. */
  most(by: 'failures' | 'slow'): TenantTally | undefined {
    const serial = this.window.serial;
    let worst: TenantTally | undefined;
    for (const [tenant, outcomes] of this.outcomes) {
      const totals = outcomes.totals(serial);
      if (totals.failures + totals.successes + totals.answered === 0) this.outcomes.delete(tenant);
      else if (totals[by] > (worst?.[by] ?? 0)) worst = { tenant, ...totals };
    }
    return worst;
  }

  /** Takes `tenant`'s outcomes out of the shared window, and forgets them: they were its own. */
  takeOut(tenant: string): void {
    this.outcomes
      .get(tenant)
      ?.forEach(this.window.serial, (age, failed, succeeded, answered, slow) =>
        this.window.forget(age, failed, succeeded + answered, slow),
      );
    this.outcomes.delete(tenant);
  }

  clear(): void {
    this.outcomes.clear();
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
        this.dropIdle(serial);
      }
      if (this.outcomes.size >= MAX_TRACKED_TENANTS) return undefined;
    }
    outcomes = new TenantOutcomes(this.window.buckets);
    this.outcomes.set(tenant, outcomes);
    return outcomes;
  }

  private dropIdle(serial: number): void {
    for (const [tenant, outcomes] of this.outcomes) {
      const { failures, successes, answered } = outcomes.totals(serial);
      if (failures + successes + answered === 0) this.outcomes.delete(tenant);
    }
  }
}
