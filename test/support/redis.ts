import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type Redis from 'ioredis';
import { createRedisConnection } from '../../src/store';

/** The Redis every session and CI has (.ci/run starts one if none answers). */
export const SHARED_REDIS_URL = 'redis://127.0.0.1:6379';

/** A decision connection like the service's own, once it is ready. */
export async function connectRedis(url = SHARED_REDIS_URL): Promise<Redis> {
  const redis = createRedisConnection({ url, commandTimeoutMs: 2_000 });
  if (redis.status !== 'ready') await once(redis, 'ready');
  return redis;
}

/** A key prefix no other test uses: tests share one Redis and run in parallel. */
export const uniquePrefix = (label = 'bh-test'): string => `${label}:${randomUUID()}:`;

/** Every key under `prefix` (SCAN, never KEYS). */
export async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    keys.push(...found);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/** Deletes every key under `prefix`: what a test leaves behind. */
export async function deleteKeysUnder(redis: Redis, prefix: string): Promise<void> {
  const keys = await keysUnder(redis, prefix);
  if (keys.length > 0) await redis.del(...keys);
}

/** Redis `TIME` in epoch milliseconds. */
export async function redisNow(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** The hash tag of a key: what Redis Cluster hashes to pick its slot. */
export const hashTag = (key: string): string => key.slice(key.indexOf('{') + 1, key.indexOf('}'));
