import type { RedisClient } from '../../store';
import { batchWritesThisTick, type RedisKeys } from '../../store';
import { asCacheable, type CacheableAnswer } from './cacheable';
import { assertTtl, type LlmCacheOperation, type LlmCacheStore } from './llm-cache.store';

/** The kind of the key that holds one answer: `<prefix>{<cache key>}:llmc`. */
export const LLM_CACHE_KEY_KIND = 'llmc';

type ErrorListener = (error: unknown, operation: LlmCacheOperation) => void;

/**
 * The exact cache shared by replicas: one string key per answer, its JSON as the value, its
 * TTL Redis's own (`SET ... PX`), so expiry needs no clock of ours and replicas with skewed
 * clocks agree. Each decision is one command: `GET`, `SET ... PX`, or `DEL` for a TTL of 0.
 * The cache key is the hash tag, which spreads answers over a cluster's slots.
 *
 * It never fails a request: a `get` that Redis does not answer (down, over the connection's
 * command timeout) or that finds something other than a clean answer is a miss, and a failed
 * `set` is dropped; each is reported once to {@link onError} listeners, and logged by nobody
 * here (an outage would otherwise log a line per request; the connection logs the outage once).
 *
 * There is no `maxEntries` or `maxBytes` here: every key has a TTL, and Redis's own
 * `maxmemory` (with a volatile eviction policy) bounds the rest.
 */
export class RedisLlmCacheStore implements LlmCacheStore {
  private errorListeners: ErrorListener[] = [];

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  async get(key: string): Promise<CacheableAnswer | null> {
    let json: string | null;
    try {
      batchWritesThisTick(this.redis);
      json = await this.redis.get(this.entryKey(key));
    } catch (error) {
      this.report(error, 'get');
      return null;
    }
    if (json === null) return null;
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch (error) {
      this.report(error, 'get');
      return null;
    }
    const completion = asCacheable(parsed);
    if (!completion) this.report(new Error('the cache entry is not a clean chat.completion'), 'get');
    return completion;
  }

  set(key: string, completion: CacheableAnswer, ttlMs: number): Promise<void> {
    // Checked before any promise, so that a route that does not wait for the write still hears of it.
    assertTtl(ttlMs);
    return this.write(this.entryKey(key), ttlMs > 0 ? JSON.stringify(completion) : undefined, ttlMs);
  }

  /** Redis keeps its own count (`INFO keyspace`, `used_memory`): nothing cheap to tell here. */
  usage(): undefined {
    return undefined;
  }

  onError(listener: ErrorListener): () => void {
    this.errorListeners.push(listener);
    return () => {
      this.errorListeners = this.errorListeners.filter((other) => other !== listener);
    };
  }

  /** The Redis key that holds the answer of `key`. */
  entryKey(key: string): string {
    return this.keys.key(key, LLM_CACHE_KEY_KIND);
  }

  private async write(entryKey: string, json: string | undefined, ttlMs: number): Promise<void> {
    try {
      batchWritesThisTick(this.redis);
      if (json === undefined) await this.redis.del(entryKey);
      else await this.redis.set(entryKey, json, 'PX', ttlMs);
    } catch (error) {
      this.report(error, 'set');
    }
  }

  private report(error: unknown, operation: LlmCacheOperation): void {
    for (const listener of this.errorListeners) {
      try {
        listener(error, operation);
      } catch {
        // A listener that throws must not turn a miss into a failed request.
      }
    }
  }
}
