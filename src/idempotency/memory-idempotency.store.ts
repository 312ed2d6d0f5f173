import type { Clock } from '../common';
import { assertLeaseMs, type IdempotencyClaim, type IdempotencyStore, type StoredOutcome } from './idempotency.store';

interface InFlight {
  fingerprint: string;
  token: string;
  leaseUntil: number;
}

interface Completed {
  fingerprint: string;
  outcome: StoredOutcome;
  expiresAt: number;
}

/**
 * The embedded idempotency store. Finished outcomes live in completion order, so both expiry
 * and eviction take from the front in O(1). At most `maxEntries` keys are kept: the oldest
 * finished ones are evicted first, in-flight ones never (there are at most as many as the
 * lanes hold, since a claim is released when its call is refused).
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly inFlight = new Map<string, InFlight>();
  private readonly completed = new Map<string, Completed>();
  private nextToken = 1;

  constructor(
    private readonly clock: Clock,
    readonly maxEntries: number,
  ) {
    if (!(Number.isSafeInteger(maxEntries) && maxEntries >= 1)) {
      throw new RangeError('maxEntries must be an integer of at least 1');
    }
  }

  claim(key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyClaim> {
    const now = this.clock.now();
    this.dropExpired(now);
    const running = this.inFlight.get(key);
    if (running && running.leaseUntil > now) {
      return Promise.resolve(running.fingerprint === fingerprint ? { status: 'in_flight' } : { status: 'conflict' });
    }
    const done = this.completed.get(key);
    if (done && done.expiresAt <= now) this.completed.delete(key);
    else if (done) {
      return Promise.resolve(
        done.fingerprint === fingerprint ? { status: 'completed', outcome: done.outcome } : { status: 'conflict' },
      );
    }
    const token = String(this.nextToken++);
    this.inFlight.set(key, { fingerprint, token, leaseUntil: now + leaseMs });
    this.evict();
    return Promise.resolve({ status: 'claimed', token });
  }

  complete(key: string, token: string, outcome: StoredOutcome, retentionMs: number): Promise<void> {
    const running = this.inFlight.get(key);
    if (running?.token === token) {
      this.inFlight.delete(key);
      this.completed.delete(key);
      this.completed.set(key, { fingerprint: running.fingerprint, outcome, expiresAt: this.clock.now() + retentionMs });
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

  private dropExpired(now: number): void {
    for (const [key, entry] of this.completed) {
      if (entry.expiresAt > now) return;
      this.completed.delete(key);
    }
  }

  private evict(): void {
    for (const key of this.completed.keys()) {
      if (this.size <= this.maxEntries) return;
      this.completed.delete(key);
    }
  }
}
