import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type Redis from 'ioredis';
import { createRedisConnection, RedisKeys } from '../../src/store';

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

/**
 * The shared Redis for one spec file: a connection, prefixes no other test uses and extra
 * connections (replicas), with this run's keys deleted and extra connections closed after
 * each test. Call `RedisTestRun.setUp()` at the top of a describe block.
 */
export class RedisTestRun {
  redis!: Redis;
  private prefixes: string[] = [];
  private extra: Redis[] = [];

  static setUp(): RedisTestRun {
    const run = new RedisTestRun();
    beforeAll(async () => {
      run.redis = await connectRedis();
    });
    afterEach(async () => {
      for (const prefix of run.prefixes) await deleteKeysUnder(run.redis, prefix);
      run.prefixes = [];
      await Promise.all(run.extra.map((connection) => connection.quit()));
      run.extra = [];
    });
    afterAll(async () => {
      await run.redis.quit();
    });
    return run;
  }

  /** A fresh prefix whose keys are deleted after the test. */
  prefix(): string {
    const prefix = uniquePrefix();
    this.prefixes.push(prefix);
    return prefix;
  }

  keys(): RedisKeys {
    return new RedisKeys(this.prefix());
  }

  /** Another connection (another replica), closed after the test. */
  async connection(): Promise<Redis> {
    const connection = await connectRedis();
    this.extra.push(connection);
    return connection;
  }
}
