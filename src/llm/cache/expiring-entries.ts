import type { Clock } from '../../common';
import { RecencyList } from './recency-list';

interface Entry {
  readonly key: string;
  /** As kept: parsed afresh by every read, so no caller holds the store's copy. */
  readonly json: string;
  readonly bytes: number;
  /** Monotonic ms of the clock; the entry is gone from this moment on. */
  readonly expiresAt: number;
  /** Neighbours in recency order: `older` towards the next to evict. */
  older: Entry | undefined;
  newer: Entry | undefined;
}

/**
 * Entries looked at for expiry per decision, beyond the one the decision is about: more than
 * the one entry a decision can add, so the sweep goes round the whole store faster than it grows.
 */
const SWEEP_STEPS = 3;

/**
 * JSON kept in this process by key until it expires, bounded by entries and by bytes: a Map for
 * lookups and a doubly linked list in recency order (a read moves its entry to the newest end).
 * Over either bound, entries go from the oldest end, least recently used first, expired or not.
 * Each decision is O(1) in the number of entries; eviction is amortised O(1), an entry being
 * evicted once. (The list is what makes it O(1): the first key of a Map that keeps losing its
 * first keys is found by skipping every deleted slot before it, until the Map rebuilds its table.)
 * The memory stores of the exact cache and of kept responses are this with their own keys.
 *
 * Time is the injected clock's: an entry is never answered at or past its expiry. Expired
 * entries are dropped when asked for, when evicted, or by a sweep that walks the list,
 * {@link SWEEP_STEPS} entries per {@link sweep}, with no timer. The bytes counted are those of
 * the JSON in UTF-8, not the heap's: the process holds roughly that much again in string and Map
 * overhead, which `maxBytes` should leave room for.
 */
export class ExpiringEntries {
  private readonly entries = new Map<string, Entry>();
  private readonly recency = new RecencyList<Entry>();
  private heldBytes = 0;
  /** The next entry the sweep looks at; undefined: start again from the oldest. */
  private cursor: Entry | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly maxBytes: number,
    private readonly maxEntries = Number.POSITIVE_INFINITY,
  ) {}

  /** The JSON kept under `key`, unexpired, now the most recently used; a sweep first. */
  read(key: string): string | null {
    const now = this.clock.now();
    this.sweep(now);
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (entry.expiresAt <= now) {
      this.remove(entry);
      return null;
    }
    if (entry !== this.recency.newest) {
      this.moveCursorOff(entry);
      this.recency.touch(entry);
    }
    return entry.json;
  }

  /**
   * Keeps `json` (of `bytes` UTF-8 bytes) under `key` until `expiresAt`, in place of what was
   * there; nothing when it alone is over `maxBytes` (what was there is gone all the same). Then
   * evicts until both bounds hold: the newest entry always fits.
   */
  put(key: string, json: string, bytes: number, expiresAt: number): void {
    const previous = this.entries.get(key);
    if (previous) this.remove(previous);
    if (bytes > this.maxBytes || this.maxEntries === 0) return;
    const entry: Entry = { key, json, bytes, expiresAt, older: undefined, newer: undefined };
    this.entries.set(key, entry);
    this.recency.append(entry);
    this.heldBytes += bytes;
    while (this.entries.size > this.maxEntries || this.heldBytes > this.maxBytes) this.remove(this.recency.oldest!);
  }

  /** Forgets what is kept under `key`, if anything. */
  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry) this.remove(entry);
  }

  /** Looks at the next {@link SWEEP_STEPS} entries and drops those expired at `now`. */
  sweep(now: number): void {
    const steps = Math.min(SWEEP_STEPS, this.entries.size);
    for (let step = 0; step < steps; step++) {
      const entry = this.cursor ?? this.recency.oldest!;
      this.cursor = entry.newer;
      if (entry.expiresAt <= now) this.remove(entry);
    }
  }

  /** Entries held now, expired ones not yet dropped included. */
  get size(): number {
    return this.entries.size;
  }

  /** UTF-8 bytes of the held JSON, expired entries not yet dropped included. */
  get bytes(): number {
    return this.heldBytes;
  }

  private remove(entry: Entry): void {
    this.entries.delete(entry.key);
    this.heldBytes -= entry.bytes;
    this.moveCursorOff(entry);
    this.recency.unlink(entry);
  }

  /** The sweep goes on from the entry after this one, wherever this one goes next. */
  private moveCursorOff(entry: Entry): void {
    if (this.cursor === entry) this.cursor = entry.newer;
  }
}
