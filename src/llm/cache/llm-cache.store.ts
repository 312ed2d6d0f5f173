import type { Awaitable } from '../../common';
import type { CacheableAnswer } from './cacheable';

/** What a store holds now, for gauges. */
export interface LlmCacheUsage {
  /** Entries held, expired ones not yet dropped included. */
  entries: number;
  /** UTF-8 bytes of the held answers' JSON. */
  bytes: number;
}

/** Which decision a store failed to make. */
export type LlmCacheOperation = 'get' | 'set';

/**
 * The exact response cache: answers by key (`exactCacheKey`), each for its own TTL, as
 * whole decisions (one command each in Redis, one synchronous block in memory). The memory
 * store answers at once, the Redis store with a promise.
 *
 * The cache never fails a request: a store that cannot answer `get` answers a miss, and a `set`
 * it cannot make is dropped; either is reported through {@link onError} (once per failure, no
 * log line), which is where a route counts them. Every `get` hands back a copy of its own: no
 * caller can change what the store holds or what another caller got.
 */
export interface LlmCacheStore {
  /** The answer stored under `key`, or null (none, expired, or the store could not answer). */
  get(key: string): Awaitable<CacheableAnswer | null>;
  /**
   * Stores `completion` under `key` for `ttlMs` milliseconds, in place of anything stored
   * there before; a copy is taken at once, so later changes to `completion` are not stored.
   * `ttlMs` 0 stores nothing and removes what was there. Throws a RangeError at once (not as
   * a rejection) for a `ttlMs` that is not a whole number of milliseconds of at least 0.
   */
  set(key: string, completion: CacheableAnswer, ttlMs: number): Awaitable<void>;
  /** What the store holds, or undefined where it cannot tell cheaply (Redis: its INFO does). */
  usage(): LlmCacheUsage | undefined;
  /** Calls `listener` for each decision the store failed to make; returns its remover. */
  onError(listener: (error: unknown, operation: LlmCacheOperation) => void): () => void;
}

/** Injection token of the {@link LlmCacheStore}. */
export const LlmCacheStore = Symbol('LlmCacheStore');

/** Throws the RangeError of {@link LlmCacheStore.set} for a TTL no store can keep. */
export function assertTtl(ttlMs: number): void {
  if (!(Number.isSafeInteger(ttlMs) && ttlMs >= 0)) {
    throw new RangeError(`ttlMs must be a whole number of milliseconds of at least 0, not ${ttlMs}`);
  }
}
