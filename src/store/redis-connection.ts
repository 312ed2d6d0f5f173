import type { Writable } from 'node:stream';
import Redis from 'ioredis';

export interface RedisConnectionOptions {
  url: string;
  /** A command not answered within this fails, instead of holding a decision. */
  commandTimeoutMs: number;
}

/**
 * A Redis connection for decisions: commands fail at once while Redis is down (no offline
 * queue, PITFALLS.md 8: a queued command would hang a fail-open limit and double-count on
 * replay) and after `commandTimeoutMs` when it does not answer; it reconnects in the background.
 */
export function createRedisConnection(options: RedisConnectionOptions): Redis {
  return new Redis(options.url, {
    enableOfflineQueue: false,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: Math.max(options.commandTimeoutMs, 1_000),
    maxRetriesPerRequest: 0,
    // Reconnect forever, at most every 2 s: readiness reports the outage meanwhile.
    retryStrategy: (times) => Math.min(times * 100, 2_000),
    lazyConnect: false,
    // A connection whose socket is already gone would otherwise keep a 2 s timer at shutdown.
    disconnectTimeout: 100,
  });
}

/**
 * Resolves once the connection is ready, or after `withinMs` either way: a service whose Redis
 * is down still starts (readiness says 503 until it is back), it does not hang at boot.
 */
export function readyWithin(redis: Redis, withinMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, withinMs);
    timer.unref();
    redis.once('ready', done);
  });
}

/**
 * Holds the connection's writes until the end of this tick, so that the commands of every call
 * that resumed in this tick leave in one write (one syscall) instead of one each. The replies
 * of concurrent calls arrive together, and each call's next command follows in the same tick;
 * ioredis's own auto-pipelining does the same with a Pipeline per tick, which cost more CPU
 * than the writes it saved. Call it before sending a command; it does nothing if the writes
 * are already held or the connection has no socket.
 */
export function batchWritesThisTick(redis: Redis): void {
  const socket = (redis as unknown as { stream?: Writable }).stream;
  if (!socket || socket.writableCorked > 0 || socket.destroyed) return;
  socket.cork();
  process.nextTick(uncork, socket);
}

function uncork(socket: Writable): void {
  socket.uncork();
}
