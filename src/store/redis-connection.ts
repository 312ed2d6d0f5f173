import type { Writable } from 'node:stream';
import { Logger, type LoggerService } from '@nestjs/common';
import Redis from 'ioredis';
import { logRecord } from '../common';

export interface RedisConnectionOptions {
  url: string;
  /** A command not answered within this fails, instead of holding a decision. */
  commandTimeoutMs: number;
  /**
   * Where the connection's state changes go, one line each (connected, lost, cannot connect).
   * @default new Logger('Redis')
   */
  logger?: LoggerService;
}

/**
 * A Redis connection for decisions: commands fail at once while Redis is down (no offline
 * queue: a queued command would hang a fail-open limit, and count twice when replayed) and
 * after `commandTimeoutMs` when it does not answer; it reconnects in the background and logs
 * each change of its state once.
 */
export function createRedisConnection(options: RedisConnectionOptions): Redis {
  const redis = new Redis(options.url, {
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
  logStateChanges(redis, options.url, options.logger ?? new Logger('Redis'));
  return redis;
}

/**
 * Logs one line when the connection comes up and one when it goes down, and nothing while it
 * stays down: ioredis emits 'error' on every failed reconnect, and without a listener Node
 * prints each one with its stack. A line names the host and port and the error's code, never
 * the URL's credentials nor a stack. Each is an object message (`event: redis`, `state`
 * `connected`, `lost` or `unreachable`, `endpoint`, `cause`) with the text in `msg`.
 */
function logStateChanges(redis: Redis, url: string, logger: LoggerService): void {
  const where = endpointOf(url);
  let state: 'starting' | 'up' | 'down' = 'starting';
  let cause = 'connection closed';
  redis.on('error', (error: Error) => {
    cause = causeOf(error, url);
  });
  redis.on('ready', () => {
    if (state !== 'up') {
      logger.log(
        logRecord({ msg: `redis: connected to ${where}`, event: 'redis', state: 'connected', endpoint: where }),
      );
    }
    state = 'up';
    cause = 'connection closed';
  });
  // 'reconnecting' follows every close that ioredis retries, and no close that quit() or
  // disconnect() asked for: a connection closed on purpose logs nothing.
  redis.on('reconnecting', () => {
    if (state === 'up') {
      const msg = `redis: connection to ${where} lost (${cause}); reconnecting`;
      logger.warn(logRecord({ msg, event: 'redis', state: 'lost', endpoint: where, cause }));
    } else if (state === 'starting') {
      const msg = `redis: cannot connect to ${where} (${cause}); retrying`;
      logger.warn(logRecord({ msg, event: 'redis', state: 'unreachable', endpoint: where, cause }));
    }
    state = 'down';
  });
}

/** `host:port` of a Redis URL: what a log line may show of it. */
function endpointOf(url: string): string {
  try {
    const { hostname, port } = new URL(url);
    return `${hostname || '127.0.0.1'}:${port || 6379}`;
  } catch {
    return 'redis';
  }
}

/** The error's code (`ECONNREFUSED`), or the first line of its message without the URL's password. */
function causeOf(error: Error, url: string): string {
  return redisErrorCause(error, passwordOf(url));
}

/**
 * What a log line may say of a Redis error: its code, or the first line of its message (never a
 * stack), with `secret` masked if given.
 */
export function redisErrorCause(error: unknown, secret?: string): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && code !== '') return code;
  const text = String((error as Error | undefined)?.message ?? error).split('\n', 1)[0];
  return secret ? text.split(secret).join('***') : text;
}

function passwordOf(url: string): string | undefined {
  try {
    const { password } = new URL(url);
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
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
