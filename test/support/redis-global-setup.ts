import Redis from 'ioredis';
import { PrivateRedis, redisServerOnPath } from './private-redis';
import { NO_REDIS_ENV, NO_REDIS_SERVER_ENV, REQUIRE_REDIS_ENV } from './redis-availability';
import { DEFAULT_REDIS_URL, withoutPassword } from './redis-url';

/** How long the probe of REDIS_URL may take before nothing counts as answering. */
const PROBE_WITHIN_MS = 1_500;

/** Where the teardown finds the redis-server this setup started (both run in Jest's main process). */
const STARTED = Symbol.for('bulkhead.test.runRedis');
type WithRunRedis = typeof globalThis & { [STARTED]?: PrivateRedis };

/**
 * Jest's global setup: gives the run a Redis before any worker starts. REDIS_URL (default
 * redis://127.0.0.1:6379) when it answers; otherwise a redis-server of the run's own, from PATH,
 * its URL put in REDIS_URL for the workers; otherwise none, and the Redis suites are skipped
 * (redis-availability.ts) unless BULKHEAD_REQUIRE_REDIS=1, which fails the run here.
 */
export default async function setUpRunRedis(): Promise<void> {
  const url = process.env.REDIS_URL || DEFAULT_REDIS_URL;
  process.env.REDIS_URL = url;
  // A run started from inside another run must not inherit its verdict.
  delete process.env[NO_REDIS_ENV];
  delete process.env[NO_REDIS_SERVER_ENV];

  const hasServer = redisServerOnPath();
  if (!hasServer) process.env[NO_REDIS_SERVER_ENV] = 'no redis-server on PATH to start a private Redis; install redis';

  const unanswered = await probe(url);
  if (unanswered !== undefined) {
    const nothing = `nothing answers at ${withoutPassword(url)} (${unanswered})`;
    if (!hasServer) {
      process.env[NO_REDIS_ENV] = `${nothing} and no redis-server on PATH; set REDIS_URL or install redis`;
    } else {
      try {
        const redis = await PrivateRedis.start();
        (globalThis as WithRunRedis)[STARTED] = redis;
        process.env.REDIS_URL = redis.url;
      } catch (error) {
        const why = String((error as Error).message ?? error).split('\n', 1)[0];
        process.env[NO_REDIS_ENV] = `${nothing} and redis-server from PATH did not start (${why}); set REDIS_URL`;
      }
    }
  }

  const missing = process.env[NO_REDIS_ENV] ?? process.env[NO_REDIS_SERVER_ENV];
  if (missing && required()) {
    throw new Error(
      `bulkhead: ${REQUIRE_REDIS_ENV}=${process.env[REQUIRE_REDIS_ENV]} and the Redis suites cannot run: ${missing}`,
    );
  }
}

/** Jest's global teardown: stops the redis-server the setup started, if it started one. */
export async function tearDownRunRedis(): Promise<void> {
  const holder = globalThis as WithRunRedis;
  const redis = holder[STARTED];
  delete holder[STARTED];
  await redis?.dispose();
}

function required(): boolean {
  const value = (process.env[REQUIRE_REDIS_ENV] ?? '').trim().toLowerCase();
  return value !== '' && value !== '0' && value !== 'false';
}

/** Undefined when Redis answers PING at `url` within PROBE_WITHIN_MS; what went wrong otherwise. */
async function probe(url: string): Promise<string | undefined> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: PROBE_WITHIN_MS,
    // One attempt: a probe that retried would only make a missing Redis slower to notice.
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    // Otherwise closing a connection that never opened keeps a 2 s timer, and Jest with it.
    disconnectTimeout: 100,
  });
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastError = error;
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_WITHIN_MS} ms`)), PROBE_WITHIN_MS);
  });
  const answered = redis.connect().then(() => redis.ping());
  // Disconnecting after the deadline rejects it too; that rejection has no one else to catch it.
  answered.catch(() => undefined);
  try {
    await Promise.race([answered, deadline]);
    return undefined;
  } catch (error) {
    const cause = lastError ?? (error as Error);
    return (cause as NodeJS.ErrnoException).code ?? cause.message.split('\n', 1)[0];
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}
