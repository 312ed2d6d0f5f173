import { RecencyList } from './recency-list';
import type { Clock } from '../../common';
import type { CacheableAnswer } from './cacheable';
import { assertTtl, type LlmCacheOperation, type LlmCacheStore, type LlmCacheUsage } from './llm-cache.store';

/** The bounds of a {@link MemoryLlmCacheStore}; 0 in either stores nothing. */
export interface MemoryLlmCacheStoreOptions {
  /** Entries held at most. */
  maxEntries: number;
  /** UTF-8 bytes of the held answers' JSON at most; a larger answer is not stored. */
  maxBytes: number;
}

interface Entry {
  readonly key: string;
  /** The answer as stored: parsed afresh by every hit, so no caller holds the store's copy. */
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
 * The embedded exact cache, bounded by entries and by the bytes of the answers' JSON: a Map for
 * lookups and a doubly linked list in recency order (a hit moves its entry to the newest end).
 * A store that goes over either bound evicts from the oldest end, least recently used first,
 * expired or not. Each decision is O(1) in the number of entries (plus the size of its answer,
 * which it serialises or parses); eviction is amortised O(1), an entry being evicted once.
 * (The list is what makes it O(1): the first key of a Map that keeps losing its first keys is
 * found by skipping every deleted slot before it, until the Map rebuilds its table.)
 *
 * Time is the injected clock's: an entry is never answered at or past its expiry. Expired
 * entries are dropped when asked for, when evicted, or by a sweep that walks the list,
 * {@link SWEEP_STEPS} entries per decision, with no timer. The bytes counted are those of the
 * JSON in UTF-8, not the heap's: the process holds roughly that much again in string and Map
 * overhead, which `maxBytes` should leave room for.
 */
export class MemoryLlmCacheStore implements LlmCacheStore {
  readonly maxEntries: number;
  readonly maxBytes: number;
  private readonly entries = new Map<string, Entry>();
  private heldBytes = 0;
  /** The next to evict. */
  private readonly recency = new RecencyList<Entry>();
  /** The next entry the sweep looks at; undefined: start again from the oldest. */
  private cursor: Entry | undefined;

  constructor(
    private readonly clock: Clock,
    options: MemoryLlmCacheStoreOptions,
  ) {
    for (const bound of ['maxEntries', 'maxBytes'] as const) {
      if (!(Number.isSafeInteger(options[bound]) && options[bound] >= 0)) {
        throw new RangeError(`${bound} must be an integer of at least 0`);
      }
    }
    this.maxEntries = options.maxEntries;
    this.maxBytes = options.maxBytes;
  }

  get(key: string): CacheableAnswer | null {
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
    return JSON.parse(entry.json) as CacheableAnswer;
  }

  set(key: string, completion: CacheableAnswer, ttlMs: number): void {
    assertTtl(ttlMs);
    const now = this.clock.now();
    const previous = this.entries.get(key);
    if (previous) this.remove(previous);
    if (ttlMs > 0 && this.maxEntries > 0) {
      const json = JSON.stringify(completion);
      const bytes = Buffer.byteLength(json, 'utf8');
      if (bytes <= this.maxBytes) {
        const entry: Entry = { key, json, bytes, expiresAt: now + ttlMs, older: undefined, newer: undefined };
        this.entries.set(key, entry);
        this.recency.append(entry);
        this.heldBytes += bytes;
        this.evict();
      }
    }
    this.sweep(now);
  }

  usage(): LlmCacheUsage {
    return { entries: this.entries.size, bytes: this.heldBytes };
  }

  /** Entries held now, expired ones not yet dropped included. */
  get size(): number {
    return this.entries.size;
  }

  /** UTF-8 bytes of the held answers' JSON. */
  get bytes(): number {
    return this.heldBytes;
  }

  /** A memory store never fails a decision: the listener is never called. */
  onError(_listener: (error: unknown, operation: LlmCacheOperation) => void): () => void {
    return () => undefined;
  }

  /** Drops least recently used entries until both bounds hold; the newest entry always fits. */
  private evict(): void {
    while (this.entries.size > this.maxEntries || this.heldBytes > this.maxBytes) this.remove(this.recency.oldest!);
  }

  private sweep(now: number): void {
    const steps = Math.min(SWEEP_STEPS, this.entries.size);
    for (let step = 0; step < steps; step++) {
      const entry = this.cursor ?? this.recency.oldest!;
      this.cursor = entry.newer;
      if (entry.expiresAt <= now) this.remove(entry);
    }
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
