import { type Clock, isResilienceError, noop, ResilienceError, type TimerHandle } from '../common';
import type { PoolName } from '../containment';
import { McpSessionTable, type SessionEntry } from './mcp-session-table';

/** What the table needs of a session: a way to end it. */
export interface ClosableSession {
  close(): Promise<void>;
}

/** The bounds of one server's tenant sessions. */
export interface TenantSessionLimits {
  /** Sessions open at once with the server, every tenant and pool together. */
  readonly maxSessions: number;
  /** A session with no call in flight for this long is ended (its DELETE sent), in milliseconds. */
  readonly idleMs: number;
}

/**
 * At most 1,000 sessions per server (a tenant holds at most two: one per pool), each ended after
 * 10 minutes without a call: an agent's pauses between steps are shorter, and a session kept
 * longer only holds the upstream's memory for a tenant that has moved on.
 */
export const TENANT_SESSION_LIMITS: TenantSessionLimits = Object.freeze({ maxSessions: 1_000, idleMs: 600_000 });

/** The longest between two looks for idle sessions. */
const MAX_SWEEP_MS = 60_000;

/**
 * Each tenant's own sessions with one upstream server, one per tenant and pool (so a contained
 * tenant's calls never travel in the session its normal calls opened): opened on first use,
 * bounded in number and idle time as Bulkhead's own `/mcp` sessions are (the same table): at the
 * bound the session idle longest without a call in flight is ended, none with one ever is
 * (`queue_full` when every one has); idle ones end on the clock, by a sweep armed only while
 * sessions are open. Ending one sends its DELETE; nothing opens after {@link close}.
 */
export class TenantSessions<S extends ClosableSession> {
  private readonly table: McpSessionTable<S>;
  private readonly sweepEveryMs: number;
  private sweepTimer: TimerHandle | undefined;
  /** Sessions being ended, waited for by {@link close}. */
  private readonly ending = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly limits: TenantSessionLimits,
    private readonly clock: Clock,
    /** Makes a tenant's new session through `pool`; it connects on its first call. */
    private readonly open: (pool: PoolName) => S,
  ) {
    // One tenant holds at most one session per pool: the bound that matters is the server's.
    this.table = new McpSessionTable(
      { maxSessions: limits.maxSessions, maxSessionsPerTenant: limits.maxSessions, idleMs: limits.idleMs },
      clock,
    );
    this.sweepEveryMs = Math.min(limits.idleMs, MAX_SWEEP_MS);
  }

  /** Sessions open now. */
  get size(): number {
    return this.table.size;
  }

  /**
   * Runs `use` in `tenant`'s session through `pool` (opened first if it has none); the session
   * counts as in use, so it is neither evicted nor expired, until `use` settles.
   */
  async use<T>(pool: PoolName, tenant: string, use: (session: S) => Promise<T>): Promise<T> {
    const entry = this.entryOf(pool, tenant);
    this.table.enter(entry);
    try {
      return await use(entry.session);
    } finally {
      this.table.leave(entry);
    }
  }

  /** Ends every session (waiting for their DELETEs, and those of sessions ended before) and opens none again. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.sweepTimer !== undefined) this.clock.clearTimer(this.sweepTimer);
    this.sweepTimer = undefined;
    for (const session of this.table.clear()) this.end(session);
    await Promise.all([...this.ending]);
  }

  private entryOf(pool: PoolName, tenant: string): SessionEntry<S> {
    if (this.closed) throw new ResilienceError('stopped', 'the upstream MCP server’s sessions are closed');
    // A pool's name holds no space: the first one ends it, whatever the tenant's name holds.
    const id = `${pool} ${tenant}`;
    const found = this.table.find(id, tenant, (expired) => this.end(expired));
    if (found) return found;
    let evicted: S[];
    try {
      evicted = this.table.makeRoom(tenant);
    } catch (error) {
      if (!isResilienceError(error) || error.kind !== 'queue_full') throw error;
      throw new ResilienceError(
        'queue_full',
        `no room for another upstream MCP session: ${this.limits.maxSessions} are open, each with a call in flight`,
        { retryAfterMs: error.retryAfterMs },
      );
    }
    for (const session of evicted) this.end(session);
    const entry = this.table.add(id, tenant, this.open(pool));
    this.armSweep();
    return entry;
  }

  private end(session: S): void {
    const ending: Promise<void> = session
      .close()
      .catch(noop)
      .then(() => {
        this.ending.delete(ending);
      });
    this.ending.add(ending);
  }

  /** Looks for idle sessions while there are sessions: a server nobody called keeps no timer. */
  private armSweep(): void {
    if (this.sweepTimer !== undefined || this.closed) return;
    this.sweepTimer = this.clock.setTimer(
      () => {
        this.sweepTimer = undefined;
        for (const session of this.table.expire()) this.end(session);
        if (this.table.size > 0) this.armSweep();
      },
      this.sweepEveryMs,
      { unref: true },
    );
  }
}
