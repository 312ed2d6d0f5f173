/**
 * Whose a counted failure is while a breaker shared by tenants is half open: the tenant-aware
 * rule of {@link TenantBlame}, carried into half open.
 *
 * After an outage for all, no tenant has a success in the window to be told apart by, and the
 * probe goes to whoever calls first: a tenant whose own calls fail and who calls often sends most
 * probes, and its failures would keep the circuit open for everyone. So, half open, the first
 * tenant whose attempt fails is suspected of failing on its own, if another tenant is waiting
 * (was refused since the circuit opened): it is refused alone (as a blamed tenant), and its
 * failure neither counts nor opens the circuit, so the next probe comes from another tenant. A
 * failure of a second tenant (or of an attempt with no tenant) is the dependency's: the circuit
 * opens for everyone, and the suspect is served again with the rest, since the failure was not
 * its own after all. A success closes the circuit, and the suspect stays refused alone until a
 * probe of its own succeeds: the dependency served another tenant right after failing it.
 *
 * A tenant alone on a dependency is never suspected (nobody else waits, so nothing could tell
 * it from the dependency): its failed probe opens the circuit, as before. Bounded: one suspect
 * per half-open period, so a dependency down for everyone costs one probe more each period (the
 * suspect's, then another tenant's), never one per tenant.
 */
export class HalfOpenSuspect {
  private suspect: string | undefined;
  /** The first tenant refused since the circuit opened (or undefined), and whether another was too. */
  private firstWaiting: string | undefined;
  private othersWaiting = false;

  /** `tenant` was refused because the circuit is open or its probes are out: it waits for it. */
  waiting(tenant: string): void {
    if (this.firstWaiting === undefined) this.firstWaiting = tenant;
    else if (tenant !== this.firstWaiting) this.othersWaiting = true;
  }

  /**
   * A counted failure of `tenant` while half open: true when it is the tenant's own (refuse it
   * alone, count nothing), false when it is the dependency's (open for everyone). A tenant
   * refused alone already (its own probe, or an attempt older than its refusal) fails on its own.
   */
  ownFailure(tenant: string | undefined, refusedAlone: boolean): boolean {
    if (tenant === undefined) return false;
    if (refusedAlone || tenant === this.suspect) return true;
    if (this.suspect !== undefined || !this.anotherWaits(tenant)) return false;
    this.suspect = tenant;
    return true;
  }

  /** The circuit opened or closed: a new period starts. Returns the tenant suspected in the last, if any. */
  end(): string | undefined {
    const suspect = this.suspect;
    this.suspect = undefined;
    this.firstWaiting = undefined;
    this.othersWaiting = false;
    return suspect;
  }

  private anotherWaits(tenant: string): boolean {
    return this.othersWaiting || (this.firstWaiting !== undefined && this.firstWaiting !== tenant);
  }
}
