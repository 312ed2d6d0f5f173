import { type Clock, ResilienceError } from '../common';

/** The bounds of the sessions a table keeps. */
export interface SessionLimits {
  /** Sessions open at once, all tenants together. */
  maxSessions: number;
  /** Sessions one tenant may hold open at once. */
  maxSessionsPerTenant: number;
  /** A session with no request in flight and none for this long is closed. */
  idleMs: number;
}

/** One open session: whose it is, and whether it is in use. */
export class SessionEntry<S> {
  /** Requests being answered now (a GET's event stream is not one: it is only listening). */
  inFlight = 0;

  constructor(
    readonly id: string,
    readonly tenant: string,
    readonly session: S,
    /** `clock.now()` of the last request's start or end. */
    public lastActiveAt: number,
  ) {}
}

/**
 * The MCP sessions open now, bounded in number (all tenants, and each tenant) and in idle time,
 * on the injected clock. A session belongs to the tenant that opened it: looked up with another
 * tenant it does not exist. When a new session finds no room, the session of the same bound
 * that has been idle longest makes room (one of the tenant's own when the tenant is at its
 * bound); a session with a request in flight is never evicted, and when every candidate has
 * one the new session is refused with `queue_full`. The table only decides: what it evicts or
 * expires, it hands back to be closed.
 */
export class McpSessionTable<S> {
  /** Least recently active first: touching a session moves it to the end. */
  private readonly entries = new Map<string, SessionEntry<S>>();
  private readonly perTenant = new Map<string, number>();

  constructor(
    private readonly limits: SessionLimits,
    private readonly clock: Clock,
  ) {
    const { maxSessions, maxSessionsPerTenant, idleMs } = limits;
    if (!Number.isSafeInteger(maxSessions) || maxSessions < 1) {
      throw new RangeError('mcp: maxSessions must be an integer of at least 1');
    }
    if (!Number.isSafeInteger(maxSessionsPerTenant) || maxSessionsPerTenant < 1) {
      throw new RangeError('mcp: maxSessionsPerTenant must be an integer of at least 1');
    }
    if (!(idleMs > 0 && Number.isFinite(idleMs))) throw new RangeError('mcp: idleMs must be a positive number');
  }

  get size(): number {
    return this.entries.size;
  }

  /** Sessions `tenant` holds open. */
  countOf(tenant: string): number {
    return this.perTenant.get(tenant) ?? 0;
  }

  /**
   * Makes room for one more session of `tenant`: the sessions to close for it (expired ones,
   * then at most one evicted), already out of the table. Throws `queue_full` when there is no
   * room because every session in the way has a request in flight.
   */
  makeRoom(tenant: string): S[] {
    const closed = this.expire();
    if (this.countOf(tenant) >= this.limits.maxSessionsPerTenant) {
      closed.push(this.evictIdlest(tenant, `tenant '${tenant}' has ${this.limits.maxSessionsPerTenant}`));
    } else if (this.entries.size >= this.limits.maxSessions) {
      closed.push(this.evictIdlest(undefined, `the service has ${this.limits.maxSessions}`));
    }
    return closed;
  }

  /** Adds a session; call {@link makeRoom} first. */
  add(id: string, tenant: string, session: S): SessionEntry<S> {
    const entry = new SessionEntry(id, tenant, session, this.clock.now());
    this.entries.set(id, entry);
    this.perTenant.set(tenant, this.countOf(tenant) + 1);
    return entry;
  }

  /**
   * The session `id` if `tenant` opened it and it has not expired; undefined otherwise (an
   * expired one is removed, and handed to `onExpired` to be closed).
   */
  find(id: string, tenant: string, onExpired: (session: S) => void): SessionEntry<S> | undefined {
    const entry = this.entries.get(id);
    if (!entry || entry.tenant !== tenant) return undefined;
    if (this.isExpired(entry, this.clock.now())) {
      this.remove(id);
      onExpired(entry.session);
      return undefined;
    }
    return entry;
  }

  /** A request to the session starts: it is in use until {@link leave}. */
  enter(entry: SessionEntry<S>): void {
    entry.inFlight++;
    this.touch(entry);
  }

  leave(entry: SessionEntry<S>): void {
    entry.inFlight--;
    this.touch(entry);
  }

  /** A request that only listens (a GET's event stream) still counts as activity. */
  touch(entry: SessionEntry<S>): void {
    entry.lastActiveAt = this.clock.now();
    // Re-inserted at the end only if still here: a closed session stays closed.
    if (this.entries.get(entry.id) === entry) {
      this.entries.delete(entry.id);
      this.entries.set(entry.id, entry);
    }
  }

  /** Removes the session `id` (closed by its client, evicted or expired); true when it was here. */
  remove(id: string): boolean {
    const entry = this.entries.get(id);
    if (!entry) return false;
    this.entries.delete(id);
    const count = this.countOf(entry.tenant) - 1;
    if (count === 0) this.perTenant.delete(entry.tenant);
    else this.perTenant.set(entry.tenant, count);
    return true;
  }

  /** Removes every idle session past its idle time; the sessions to close. */
  expire(): S[] {
    const now = this.clock.now();
    const expired: S[] = [];
    for (const entry of this.entries.values()) {
      // Ordered by last activity: from the first one still fresh on, all are.
      if (now - entry.lastActiveAt < this.limits.idleMs) break;
      if (entry.inFlight > 0) continue;
      this.remove(entry.id);
      expired.push(entry.session);
    }
    return expired;
  }

  /** Every session held now (expired ones included until looked up or swept). */
  sessions(): S[] {
    return [...this.entries.values()].map((entry) => entry.session);
  }

  /** Removes every session; the sessions to close. */
  clear(): S[] {
    const all = [...this.entries.values()].map((entry) => entry.session);
    this.entries.clear();
    this.perTenant.clear();
    return all;
  }

  private isExpired(entry: SessionEntry<S>, now: number): boolean {
    return entry.inFlight === 0 && now - entry.lastActiveAt >= this.limits.idleMs;
  }

  /** Removes the idle session (of `tenant`, or any) unused longest, or throws `queue_full`. */
  private evictIdlest(tenant: string | undefined, bound: string): S {
    for (const entry of this.entries.values()) {
      if (entry.inFlight > 0 || (tenant !== undefined && entry.tenant !== tenant)) continue;
      this.remove(entry.id);
      return entry.session;
    }
    throw new ResilienceError(
      'queue_full',
      `no room for another MCP session: ${bound}, each with a request in flight`,
      {
        retryAfterMs: 1_000,
      },
    );
  }
}
