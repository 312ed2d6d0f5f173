import type { ContainmentSnapshot } from './containment-snapshot';

/** Most snapshots a {@link ContainmentCache} holds by default. */
export const DEFAULT_CONTAINMENT_CACHE_ENTRIES = 100_000;

/** What a read took from {@link ContainmentCache.ticket} when it started: the epoch, or none while not live. */
export type CacheTicket = number | undefined;

/**
 * The containment snapshots one replica has read, valid only while something keeps them fresh
 * (Redis invalidations): it answers nothing, and takes nothing, while it is not live. Every
 * invalidation and every change of liveness moves the epoch on, and a read answered from
 * elsewhere is kept only if the epoch is still the one it started with — a reply that raced with
 * a change is never kept. Past `maxEntries` the entry kept the longest goes first.
 */
export class ContainmentCache {
  private readonly entries = new Map<string, ContainmentSnapshot>();
  private epoch = 0;
  private liveNow = false;
  private readonly listeners = new Set<(live: boolean) => void>();

  /** @param maxEntries most snapshots held (0 holds none). @default 100000 */
  constructor(readonly maxEntries = DEFAULT_CONTAINMENT_CACHE_ENTRIES) {
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 0) {
      throw new RangeError(`maxEntries must be a whole number ≥ 0, got ${maxEntries}`);
    }
  }

  /** Whether the cache answers reads now. */
  get live(): boolean {
    return this.liveNow;
  }

  /** Snapshots held now. */
  get size(): number {
    return this.entries.size;
  }

  /** The tenant's snapshot, if held (never while not live). */
  get(tenant: string): ContainmentSnapshot | undefined {
    return this.entries.get(tenant);
  }

  /** Taken when a read starts elsewhere; hand it back to {@link put} with the answer. */
  ticket(): CacheTicket {
    return this.liveNow ? this.epoch : undefined;
  }

  /** Keeps `snapshot` unless the cache was invalidated, or changed liveness, since `ticket` was taken. */
  put(tenant: string, snapshot: ContainmentSnapshot, ticket: CacheTicket): void {
    if (ticket !== this.epoch || !this.liveNow || this.maxEntries === 0) return;
    if (!this.entries.has(tenant) && this.entries.size >= this.maxEntries) {
      this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(tenant, snapshot);
  }

  /** The tenant's snapshot changed: drops it, and keeps no read that was under way. */
  invalidate(tenant: string): void {
    this.epoch++;
    this.entries.delete(tenant);
  }

  /** Turns the cache on or off; either way it starts empty. Listeners hear changes only. */
  setLive(live: boolean): void {
    this.epoch++;
    this.entries.clear();
    if (live === this.liveNow) return;
    this.liveNow = live;
    for (const listener of this.listeners) listener(live);
  }

  /** Calls `listener` on every change of liveness; answers its disposer. */
  onLiveChange(listener: (live: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
