import { randomUUID } from 'node:crypto';
import type { LoggerService } from '@nestjs/common';
import type Redis from 'ioredis';
import { createRedisConnection, readyWithin, RedisKeys } from '../../src/store';
import { DEFAULT_REDIS_URL, withoutPassword } from './redis-url';

/**
 * The Redis the Redis suites share: REDIS_URL, which the global setup (redis-global-setup.ts)
 * points at a redis-server of the run's own when nothing answers at redis://127.0.0.1:6379.
 */
export const SHARED_REDIS_URL = process.env.REDIS_URL || DEFAULT_REDIS_URL;

/** A logger for connections whose state changes a test expects: it drops every line. */
export const silentLogger: LoggerService = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** How long connectRedis waits for a connection to be ready before it gives up. */
const CONNECT_WITHIN_MS = 5_000;

/**
 * A decision connection like the service's own, once it is ready; it throws if the connection
 * is not ready within 5 s, and stops that connection's retries first.
 */
export async function connectRedis(url = SHARED_REDIS_URL): Promise<Redis> {
  const problems: string[] = [];
  // Connections come and go by the hundred in a run: only their trouble is worth a line, and
  // that goes into the error below.
  const logger: LoggerService = {
    log: () => undefined,
    warn: (message: unknown) => problems.push(String(message)),
    error: (message: unknown) => problems.push(String(message)),
  };
  const redis = createRedisConnection({ url, commandTimeoutMs: 2_000, logger });
  await readyWithin(redis, CONNECT_WITHIN_MS);
  if (redis.status !== 'ready') {
    redis.disconnect();
    const last = problems.at(-1) ?? `status ${redis.status}`;
    throw new Error(`no Redis ready at ${withoutPassword(url)} within ${CONNECT_WITHIN_MS} ms: ${last}`);
  }
  return redis;
}

/** Closes a connection from connectRedis, whatever state it is in; never rejects. */
export async function closeRedis(redis: Redis | undefined): Promise<void> {
  if (!redis) return;
  // QUIT needs an answer, which a connection that lost its Redis never gets: cut it instead.
  await redis.quit().catch(() => undefined);
  redis.disconnect();
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
      for (const prefix of run.prefixes.splice(0)) await deleteKeysUnder(run.redis, prefix);
      await Promise.all(run.extra.splice(0).map(closeRedis));
    });
    afterAll(async () => {
      await closeRedis(run.redis);
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
