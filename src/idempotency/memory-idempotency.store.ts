import type { Clock } from '../common';
import { assertIdempotencyBounds, type IdempotencyBounds } from './idempotency-bounds';
import { assertLeaseMs, type IdempotencyClaim, type IdempotencyStore, type StoredOutcome } from './idempotency.store';
import { keptOutcome, notKeptOutcome } from './kept-outcome';

interface InFlight {
  fingerprint: string;
  tenant: string;
  token: string;
  leaseUntil: number;
}

interface Completed {
  fingerprint: string;
  tenant: string;
  /** The outcome's JSON, parsed afresh by every replay; undefined once not kept (too large, or dropped for bytes). */
  json: string | undefined;
  bytes: number;
  /** What a replay says of a key whose outcome was not kept. */
  attempts: number;
  expiresAt: number;
}

/** One tenant's kept outcomes, oldest first, and their bytes. */
interface TenantOutcomes {
  bytes: number;
  kept: Map<string, Completed>;
}

/**
 * The embedded idempotency store. Finished outcomes live in completion order, so expiry and
 * eviction take from the front in O(1). Bounded by count and by bytes (docs/design.md,
 * "Idempotency"):
 * - at most `maxEntries` keys: the oldest finished ones are evicted first, in-flight ones never
 *   (there are at most as many as the lanes hold, since a claim is released when its call is refused);
 * - outcomes are kept as their JSON, at most `maxEntryBytes` each, `maxBytesPerTenant` for one
 *   tenant's keys and `maxBytes` in all. Past a byte bound the oldest outcomes (the tenant's own,
 *   then anyone's) are dropped, but their keys stay: a repeat is answered `idempotency_conflict`
 *   instead of running the call a second time. A dropped outcome costs only its key and fingerprint,
 *   which `maxEntries` bounds.
 * Bytes are the JSON's UTF-8 length, not the heap's: V8 holds a string in at most that much, plus
 * a fixed overhead per key.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly bounds: Readonly<IdempotencyBounds>;
  private readonly inFlight = new Map<string, InFlight>();
  private readonly completed = new Map<string, Completed>();
  /** Keys whose outcome is kept, oldest first, over all tenants. */
  private readonly kept = new Map<string, Completed>();
  private readonly tenants = new Map<string, TenantOutcomes>();
  private keptBytes = 0;
  private nextToken = 1;

  constructor(
    private readonly clock: Clock,
    bounds: IdempotencyBounds,
  ) {
    assertIdempotencyBounds(bounds);
    this.bounds = { ...bounds };
  }

  claim(key: string, fingerprint: string, leaseMs: number, tenant: string, token?: string): Promise<IdempotencyClaim> {
    const now = this.clock.now();
    this.dropExpired(now);
    const running = this.inFlight.get(key);
    if (running && running.leaseUntil > now) {
      if (running.fingerprint !== fingerprint) return Promise.resolve({ status: 'conflict' });
      // The same claim again (its reply was lost): it holds the key, it does not wait on itself.
      if (token !== undefined && running.token === token) return Promise.resolve({ status: 'claimed', token });
      return Promise.resolve({ status: 'in_flight' });
    }
    const done = this.completed.get(key);
    if (done && done.expiresAt <= now) this.forget(key, done);
    else if (done) {
      if (done.fingerprint !== fingerprint) return Promise.resolve({ status: 'conflict' });
      const outcome =
        done.json === undefined ? notKeptOutcome(done.attempts) : (JSON.parse(done.json) as StoredOutcome);
      return Promise.resolve({ status: 'completed', outcome });
    }
    const claimToken = token ?? `memory-${this.nextToken++}`;
    this.inFlight.set(key, { fingerprint, tenant, token: claimToken, leaseUntil: now + leaseMs });
    this.evict();
    return Promise.resolve({ status: 'claimed', token: claimToken });
  }

  complete(key: string, token: string, outcome: StoredOutcome, retentionMs: number): Promise<void> {
    const running = this.inFlight.get(key);
    if (running?.token === token) {
      this.inFlight.delete(key);
      const previous = this.completed.get(key);
      if (previous) this.forget(key, previous);
      const kept = keptOutcome(outcome, this.bounds.maxEntryBytes);
      const { fingerprint, tenant } = running;
      const entry: Completed = {
        fingerprint,
        tenant,
        json: kept?.json,
        bytes: kept?.bytes ?? 0,
        attempts: outcome.attempts,
        expiresAt: this.clock.now() + retentionMs,
      };
      this.completed.set(key, entry);
      if (kept) this.keep(key, entry);
      this.evict();
    }
    return Promise.resolve();
  }

  release(key: string, token: string): Promise<void> {
    if (this.inFlight.get(key)?.token === token) this.inFlight.delete(key);
    return Promise.resolve();
  }

  // async: a lease the check refuses rejects, as the interface says, rather than throwing.
  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    assertLeaseMs(leaseMs);
    const now = this.clock.now();
    const running = this.inFlight.get(key);
    // A lapsed lease is lost even before another claim takes it over: that one may be on its way.
    if (running?.token !== token || running.leaseUntil <= now) return false;
    running.leaseUntil = Math.max(running.leaseUntil, now + leaseMs);
    return true;
  }

  /** Keys held now: in flight and finished. */
  get size(): number {
    return this.inFlight.size + this.completed.size;
  }

  /** UTF-8 bytes of the outcomes kept now, all tenants together. */
  get bytes(): number {
    return this.keptBytes;
  }

  /** UTF-8 bytes of the outcomes kept now for `tenant`'s keys. */
  bytesOf(tenant: string): number {
    return this.tenants.get(tenant)?.bytes ?? 0;
  }

  /** Counts a new outcome in, then drops the oldest ones until the tenant's and the total bytes hold. */
  private keep(key: string, entry: Completed): void {
    let outcomes = this.tenants.get(entry.tenant);
    if (!outcomes) {
      outcomes = { bytes: 0, kept: new Map() };
      this.tenants.set(entry.tenant, outcomes);
    }
    outcomes.kept.set(key, entry);
    outcomes.bytes += entry.bytes;
    this.kept.set(key, entry);
    this.keptBytes += entry.bytes;
    while (outcomes.bytes > this.bounds.maxBytesPerTenant) this.dropOldest(outcomes.kept);
    while (this.keptBytes > this.bounds.maxBytes) this.dropOldest(this.kept);
  }

  private dropOldest(kept: Map<string, Completed>): void {
    const [key, entry] = kept.entries().next().value!;
    this.drop(key, entry);
  }

  /** Forgets the outcome of a finished key, which stays: it is replayed as not kept. */
  private drop(key: string, entry: Completed): void {
    if (entry.json === undefined) return;
    const outcomes = this.tenants.get(entry.tenant)!;
    outcomes.kept.delete(key);
    outcomes.bytes -= entry.bytes;
    if (outcomes.kept.size === 0) this.tenants.delete(entry.tenant);
    this.kept.delete(key);
    this.keptBytes -= entry.bytes;
    entry.json = undefined;
    entry.bytes = 0;
  }

  private forget(key: string, entry: Completed): void {
    this.drop(key, entry);
    this.completed.delete(key);
  }

  private dropExpired(now: number): void {
    for (const [key, entry] of this.completed) {
      if (entry.expiresAt > now) return;
      this.forget(key, entry);
    }
  }

  private evict(): void {
    for (const [key, entry] of this.completed) {
      if (this.size <= this.bounds.maxEntries) return;
      this.forget(key, entry);
    }
  }
}
