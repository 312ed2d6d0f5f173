import type { Clock } from '../../common';
import type { CacheableAnswer } from './cacheable';
import { ExpiringEntries } from './expiring-entries';
import { assertTtl, type LlmCacheOperation, type LlmCacheStore, type LlmCacheUsage } from './llm-cache.store';

/** The bounds of a {@link MemoryLlmCacheStore}; 0 in either stores nothing. */
export interface MemoryLlmCacheStoreOptions {
  /** Entries held at most. */
  maxEntries: number;
  /** UTF-8 bytes of the held answers' JSON at most; a larger answer is not stored. */
  maxBytes: number;
}

/**
 * The embedded exact cache, bounded by entries and by the bytes of the answers' JSON
 * ({@link ExpiringEntries}: least recently used out first, expired or not; O(1) decisions; the
 * injected clock's time, with no timer). A hit parses the answer afresh, so no caller holds the
 * store's copy.
 */
export class MemoryLlmCacheStore implements LlmCacheStore {
  readonly maxEntries: number;
  readonly maxBytes: number;
  private readonly entries: ExpiringEntries;

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
    this.entries = new ExpiringEntries(clock, options.maxBytes, options.maxEntries);
  }

  get(key: string): CacheableAnswer | null {
    const json = this.entries.read(key);
    return json === null ? null : (JSON.parse(json) as CacheableAnswer);
  }

  set(key: string, completion: CacheableAnswer, ttlMs: number): void {
    assertTtl(ttlMs);
    const now = this.clock.now();
    if (ttlMs > 0 && this.maxEntries > 0) {
      const json = JSON.stringify(completion);
      this.entries.put(key, json, Buffer.byteLength(json, 'utf8'), now + ttlMs);
    } else {
      // Not stored: what was there must not answer after this set either.
      this.entries.delete(key);
    }
    this.entries.sweep(now);
  }

  usage(): LlmCacheUsage {
    return { entries: this.entries.size, bytes: this.entries.bytes };
  }

  /** Entries held now, expired ones not yet dropped included. */
  get size(): number {
    return this.entries.size;
  }

  /** UTF-8 bytes of the held answers' JSON. */
  get bytes(): number {
    return this.entries.bytes;
  }

  /** A memory store never fails a decision: the listener is never called. */
  onError(_listener: (error: unknown, operation: LlmCacheOperation) => void): () => void {
    return () => undefined;
  }
}
