import type { Writable } from 'node:stream';
import { Logger, type LoggerService } from '@nestjs/common';
import Redis, { Cluster, type RedisOptions } from 'ioredis';
import { logRecord } from '../common';

/** A connection to one Redis (maybe found through Sentinel), or to a Redis Cluster: what the stores run on. */
export type RedisClient = Redis | Cluster;

/** TLS to Redis: `true` with the system's CAs, or what to trust and check. */
export type RedisTls = boolean | { ca?: string; servername?: string; rejectUnauthorized?: boolean };

export interface RedisConnectionOptions {
  /** One Redis. Exactly one of `url`, `cluster`, `sentinel`. */
  url?: string;
  /** A Redis Cluster, found from any of its `nodes`. */
  cluster?: {
    nodes: readonly string[];
    natMap?: Record<string, string>;
    scaleReads?: 'master' | 'slave' | 'all';
  };
  /** The primary called `name`, found through the Sentinels at `nodes`, followed through failovers. */
  sentinel?: { name: string; nodes: readonly string[]; password?: string };
  username?: string;
  password?: string;
  tls?: RedisTls;
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
 *
 * On a Cluster, each command goes to its key's slot (every decision's keys share one, by their
 * hash tag), following MOVED and ASK as slots move; on Sentinel, the connection asks the
 * Sentinels for the primary each time it connects, so after a failover it reconnects to the
 * promoted replica by itself.
 */
export function createRedisConnection(options: RedisConnectionOptions & { url: string }): Redis;
export function createRedisConnection(options: RedisConnectionOptions): RedisClient;
export function createRedisConnection(options: RedisConnectionOptions): RedisClient {
  // A node URL may carry the nodes' credentials (`redis://user:pass@host:port`), as `url` does.
  const fromNode = credentialsOf(options.cluster?.nodes[0]);
  const perNode = nodeOptions({
    ...options,
    username: options.username ?? fromNode.username,
    password: options.password || fromNode.password,
  });
  let redis: RedisClient;
  if (options.cluster) {
    const { nodes, natMap, scaleReads } = options.cluster;
    redis = new Cluster(nodes.map(hostAndPort), {
      redisOptions: perNode,
      enableOfflineQueue: false,
      // Rediscover the cluster forever, at most every 2 s, as one Redis reconnects.
      clusterRetryStrategy: (times) => Math.min(times * 100, 2_000),
      slotsRefreshTimeout: Math.max(options.commandTimeoutMs, 1_000),
      ...(natMap ? { natMap: natMapOf(natMap) } : {}),
      scaleReads: scaleReads ?? 'master',
    });
  } else if (options.sentinel) {
    const { name, nodes } = options.sentinel;
    // A Sentinel URL's password is the Sentinels' own, as `sentinel.password` is.
    const password = options.sentinel.password || credentialsOf(nodes[0]).password;
    redis = new Redis({
      ...perNode,
      sentinels: nodes.map(hostAndPort),
      name,
      role: 'master',
      ...(password ? { sentinelPassword: password } : {}),
      ...(perNode.tls ? { enableTLSForSentinelMode: true, sentinelTLS: perNode.tls } : {}),
      // Asked again on every reconnect, so a failover is followed without a restart.
      sentinelRetryStrategy: (times) => Math.min(times * 100, 2_000),
    });
  } else if (options.url) {
    redis = new Redis(options.url, perNode);
  } else {
    throw new RangeError('a Redis connection needs one of url, cluster, sentinel');
  }
  logStateChanges(redis, describeEndpoint(options), secretsOf(options), options.logger ?? new Logger('Redis'));
  return redis;
}

/** The options of every connection to a Redis node (the one, the primary, each of a cluster's). */
function nodeOptions(options: RedisConnectionOptions): RedisOptions {
  const tls = tlsOf(options);
  return {
    enableOfflineQueue: false,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: Math.max(options.commandTimeoutMs, 1_000),
    maxRetriesPerRequest: 0,
    // Reconnect forever, at most every 2 s: readiness reports the outage meanwhile.
    retryStrategy: (times) => Math.min(times * 100, 2_000),
    lazyConnect: false,
    // A connection whose socket is already gone would otherwise keep a 2 s timer at shutdown.
    disconnectTimeout: 100,
    ...(options.username ? { username: options.username } : {}),
    // An unset `${REDIS_PASSWORD:-}` is empty: no AUTH, as for a Redis without a password.
    ...(options.password ? { password: options.password } : {}),
    ...(tls ? { tls } : {}),
  };
}

/** TLS options as node's `tls.connect` takes them: asked for, or implied by a `rediss://` node. */
function tlsOf(options: RedisConnectionOptions): RedisOptions['tls'] {
  const { tls } = options;
  if (tls === false) return undefined;
  if (typeof tls === 'object') {
    return {
      ...(tls.ca ? { ca: tls.ca } : {}),
      ...(tls.servername ? { servername: tls.servername } : {}),
      rejectUnauthorized: tls.rejectUnauthorized ?? true,
    };
  }
  const nodes = options.cluster?.nodes ?? options.sentinel?.nodes ?? [];
  // One Redis's `rediss://` URL already says TLS to ioredis itself.
  return tls === true || nodes.some((node) => node.startsWith('rediss://')) ? {} : undefined;
}

/** The user and password a Redis URL carries, decoded. */
function credentialsOf(url: string | undefined): { username?: string; password?: string } {
  if (!url) return {};
  try {
    const { username, password } = new URL(url);
    return {
      ...(username ? { username: decodeURIComponent(username) } : {}),
      ...(password ? { password: decodeURIComponent(password) } : {}),
    };
  } catch {
    return {};
  }
}

/** `redis://host:port` as the `{ host, port }` ioredis takes for a cluster node or a Sentinel. */
function hostAndPort(url: string): { host: string; port: number } {
  const { hostname, port } = new URL(url);
  return { host: hostname || '127.0.0.1', port: Number(port) || 6379 };
}

function natMapOf(map: Record<string, string>): Record<string, { host: string; port: number }> {
  return Object.fromEntries(
    Object.entries(map).map(([announced, reached]) => {
      const at = reached.lastIndexOf(':');
      return [announced, { host: reached.slice(0, at), port: Number(reached.slice(at + 1)) }];
    }),
  );
}

/** What a log line names the connection by: endpoints, never credentials. */
function describeEndpoint(options: RedisConnectionOptions): string {
  if (options.cluster) return `cluster ${options.cluster.nodes.map(endpointOf).join(',')}`;
  if (options.sentinel) {
    return `primary ${options.sentinel.name} via sentinels ${options.sentinel.nodes.map(endpointOf).join(',')}`;
  }
  return endpointOf(options.url ?? '');
}

/** The passwords a log line must never show: the configured ones, and any a URL carries. */
function secretsOf(options: RedisConnectionOptions): string[] {
  const urls = [options.url, ...(options.cluster?.nodes ?? []), ...(options.sentinel?.nodes ?? [])];
  const secrets = [options.password, options.sentinel?.password, ...urls.map((url) => credentialsOf(url).password)];
  return secrets.filter((secret): secret is string => Boolean(secret));
}

/**
 * Logs one line when the connection comes up and one when it goes down, and nothing while it
 * stays down: ioredis emits 'error' on every failed reconnect, and without a listener Node
 * prints each one with its stack. A line names the host and port and the error's code, never
 * the URL's credentials nor a stack. Each is an object message (`event: redis`, `state`
 * `connected`, `lost` or `unreachable`, `endpoint`, `cause`) with the text in `msg`.
 */
function logStateChanges(redis: RedisClient, where: string, secrets: readonly string[], logger: LoggerService): void {
  let state: 'starting' | 'up' | 'down' = 'starting';
  let cause = 'connection closed';
  const unreachable = () => {
    const msg = `redis: cannot connect to ${where} (${cause}); retrying`;
    logger.warn(logRecord({ msg, event: 'redis', state: 'unreachable', endpoint: where, cause }));
    state = 'down';
  };
  redis.on('error', (error: Error) => {
    cause = secrets.reduce((text, secret) => text.split(secret).join('***'), redisErrorCause(error));
    // Through Sentinel, a connection whose Sentinels all fail keeps 'connecting' and only errs.
    if (state === 'starting' && redis.status === 'connecting' && !(redis instanceof Cluster)) unreachable();
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
      unreachable();
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

/**
 * Resolves once the connection is ready, or after `withinMs` either way: a service whose Redis
 * is down still starts (readiness says 503 until it is back), it does not hang at boot.
 */
export function readyWithin(redis: RedisClient, withinMs: number): Promise<void> {
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
export function batchWritesThisTick(redis: RedisClient): void {
  const socket = (redis as unknown as { stream?: Writable }).stream;
  if (!socket || socket.writableCorked > 0 || socket.destroyed) return;
  socket.cork();
  process.nextTick(uncork, socket);
}

function uncork(socket: Writable): void {
  socket.uncork();
}
