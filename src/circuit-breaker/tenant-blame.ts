import type { BlameRule } from './blame-rule';
import type { RollingWindow } from './rolling-window';
import type { TenantCircuits } from './tenant-circuits';
import { TenantTallies } from './tenant-tallies';

/**
 * Tells one tenant's failures from the dependency's, for one breaker shared by every tenant:
 * records each tenant's outcomes beside the shared window ({@link TenantTallies}), asks the
 * {@link BlameRule} whose each failure (or slow call) is as it goes into the window, and when
 * the rule names a tenant, takes its outcomes out of the window and refuses it alone
 * ({@link TenantCircuits}), before the breaker reads the window to decide. A second failing
 * tenant is found the same way at a later trip, once the first is out of the window.
 *
 * A refused tenant is served again only after a real success of its own; its probe that fails,
 * or succeeds slowly, refuses it again. While the shared breaker is half open, the first tenant
 * whose attempt fails is refused alone and a second tenant's failure opens it for all
 * (half-open-suspect.ts).
 */
export class TenantBlame {
  private readonly tallies: TenantTallies;

  constructor(
    private readonly window: RollingWindow,
    private readonly circuits: TenantCircuits,
    private readonly rule: BlameRule,
  ) {
    this.tallies = new TenantTallies(window);
  }

  /**
   * `tenant`'s attempt succeeded, but slowly: if the tenant is refused on its own and probing,
   * that was its probe's answer, and it is refused again (true), the slowness its own.
   */
  slowProbe(tenant: string): boolean {
    if (!this.circuits.probing(tenant)) return false;
    this.circuits.refuse(tenant, true);
    return true;
  }

  /**
   * A slow attempt of `tenant`, its outcome recorded already and its slowness counted in the
   * shared window: blames the tenant whose own slowness this is, before the breaker reads the window.
   */
  slow(tenant: string): void {
    this.tallies.record(tenant, 'slow');
    const blamed = this.rule.blameSlowness(this.window, this.tallies);
    if (blamed !== undefined) this.blameOn(blamed);
  }

  /** A real success of `tenant` (the action resolved). */
  succeeded(tenant: string): void {
    // Its probe came back well: it is served like everyone again.
    if (this.circuits.probing(tenant)) this.circuits.close(tenant);
    this.tallies.record(tenant, 'succeeded');
  }

  /**
   * `attempt` of `tenant` ended with an error that does not count (a 4xx): a success in the
   * shared window, since the dependency answered, but not one of the tenant's own.
   */
  answered(tenant: string, attempt: object): void {
    this.circuits.endProbe(tenant, attempt);
    this.tallies.record(tenant, 'answered');
  }

  /** `attempt` of `tenant` was stopped: it counts nowhere. */
  stopped(tenant: string, attempt: object): void {
    this.circuits.endProbe(tenant, attempt);
  }

  /**
   * A counted failure of `tenant`, already in the shared window: blames the tenant whose own
   * failures these are, before the breaker reads the window.
   */
  failed(tenant: string, halfOpen: boolean): void {
    if (this.circuits.probing(tenant)) {
      // Its own probe failed: refused again, and the failure was never the dependency's.
      this.window.forget(0, 1, 0);
      this.circuits.refuse(tenant, true);
      return;
    }
    this.tallies.record(tenant, 'failed');
    if (halfOpen) return;
    const blamed = this.rule.blameFailure(tenant, this.window, this.tallies);
    if (blamed !== undefined) this.blameOn(blamed);
  }

  /**
   * A counted failure of `tenant` while the shared breaker is half open, found to be the
   * tenant's own (half-open-suspect.ts), so kept out of the shared window: refuses it alone,
   * for longer when it was its own probe that failed. One refused already with no probe out (an
   * older attempt failing) stays refused as it was.
   */
  failedOwn(tenant: string): void {
    const circuit = this.circuits.open.get(tenant);
    if (circuit && circuit.probe === undefined) return;
    this.circuits.refuse(tenant, circuit !== undefined);
  }

  /** Forgets every tenant: the breaker was closed by an operator. */
  clear(): void {
    this.tallies.clear();
    this.circuits.clear();
  }

  /** Takes `tenant`'s outcomes out of the shared window and refuses it on its own. */
  private blameOn(tenant: string): void {
    this.tallies.takeOut(tenant);
    this.circuits.refuse(tenant, false);
  }
}
