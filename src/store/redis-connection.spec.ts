import type { Socket } from 'node:net';
import { Logger, type LoggerService } from '@nestjs/common';
import type Redis from 'ioredis';
import { PrivateRedis } from '../../test/support/private-redis';
import { closeRedis, connectRedis, deleteKeysUnder, SHARED_REDIS_URL, uniquePrefix } from '../../test/support/redis';
import { describeRedis, describeRedisServer } from '../../test/support/redis-availability';
import { eventually } from '../../test/support/eventually';
import { batchWritesThisTick, createRedisConnection, readyWithin } from './redis-connection';

const socketOf = (redis: Redis) => (redis as unknown as { stream: Socket }).stream;
const nextTick = () => new Promise<void>((resolve) => process.nextTick(resolve));

describeRedis('batchWritesThisTick (a real Redis at REDIS_URL)', () => {
  let redis: Redis;
  const prefix = uniquePrefix('bh-test-batch');

  beforeAll(async () => {
    redis = await connectRedis();
  });

  afterAll(async () => {
    await deleteKeysUnder(redis, prefix);
    await closeRedis(redis);
  });

  it('holds the commands of one tick and sends them together at its end, each answered in order', async () => {
    const socket = socketOf(redis);
    const key = `${prefix}counter`;

    batchWritesThisTick(redis);
    const answers = Array.from({ length: 20 }, () => redis.incr(key));
    expect(socket.writableCorked).toBe(1);
    expect(socket.writableLength).toBeGreaterThan(0);

    await nextTick();
    expect(socket.writableCorked).toBe(0);
    await expect(Promise.all(answers)).resolves.toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
  });

  it('holds the writes once per tick however often it is asked, and again on a later tick', async () => {
    const socket = socketOf(redis);

    batchWritesThisTick(redis);
    batchWritesThisTick(redis);
    expect(socket.writableCorked).toBe(1);
    await nextTick();
    expect(socket.writableCorked).toBe(0);

    batchWritesThisTick(redis);
    expect(socket.writableCorked).toBe(1);
    await nextTick();
    expect(socket.writableCorked).toBe(0);
  });

  it('leaves a connection without a socket alone', () => {
    const idle = createRedisConnection({ url: SHARED_REDIS_URL, commandTimeoutMs: 100 });
    idle.disconnect();

    expect(() => batchWritesThisTick(idle)).not.toThrow();
  });
});

/** A logger that keeps its lines as `level: msg`, and their fields. */
function recordingLogger(): { logger: LoggerService; lines: string[]; fields: Array<Record<string, unknown>> } {
  const lines: string[] = [];
  const fields: Array<Record<string, unknown>> = [];
  const keep = (level: string) => (message: Record<string, unknown>) => {
    lines.push(`${level}: ${String(message.msg)}`);
    fields.push(message);
  };
  return { lines, fields, logger: { log: keep('log'), warn: keep('warn'), error: keep('error') } };
}

/** Resolves after the connection has scheduled `count` more reconnects (each after a failure). */
async function reconnects(redis: Redis, count: number): Promise<void> {
  for (let seen = 0; seen < count; seen++) {
    await new Promise<void>((resolve) => redis.once('reconnecting', () => resolve()));
  }
}

/** A URL nothing listens on: every attempt is refused at once. */
const REFUSED_URL = 'redis://127.0.0.1:1';

describe('createRedisConnection while Redis is unreachable', () => {
  let redis: Redis | undefined;

  afterEach(() => {
    redis?.disconnect();
    redis = undefined;
    jest.restoreAllMocks();
  });

  it('logs one line, without a stack, however often it retries, and prints no unhandled error', async () => {
    const printed = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const { logger, lines, fields } = recordingLogger();

    redis = createRedisConnection({ url: REFUSED_URL, commandTimeoutMs: 100, logger });
    await reconnects(redis, 4);

    expect(lines).toEqual(['warn: redis: cannot connect to 127.0.0.1:1 (ECONNREFUSED); retrying']);
    expect(fields[0]).toMatchObject({
      event: 'redis',
      state: 'unreachable',
      endpoint: '127.0.0.1:1',
      cause: 'ECONNREFUSED',
    });
    expect(printed).not.toHaveBeenCalled();
  });

  it('keeps the password of the URL out of its lines', async () => {
    const { logger, lines, fields } = recordingLogger();

    redis = createRedisConnection({ url: 'redis://:hunter2-secret@127.0.0.1:1', commandTimeoutMs: 100, logger });
    await reconnects(redis, 2);

    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('127.0.0.1:1');
    expect(JSON.stringify(fields)).not.toContain('hunter2-secret');
  });

  it("keeps a cluster node's and a Sentinel's password out of its lines", async () => {
    const { logger, lines, fields } = recordingLogger();
    const cluster = createRedisConnection({
      cluster: { nodes: ['redis://:cluster-secret@127.0.0.1:1'] },
      commandTimeoutMs: 100,
      logger,
    });
    const sentinel = createRedisConnection({
      sentinel: { name: 'mymaster', nodes: ['redis://:sentinel-secret@127.0.0.1:1'] },
      commandTimeoutMs: 100,
      logger,
    });
    try {
      await eventually(() => expect(lines).toHaveLength(2));
    } finally {
      // A Sentinel connection ends once its pending retry comes round.
      const ended = new Promise((resolve) => sentinel.once('end', resolve));
      cluster.disconnect();
      sentinel.disconnect();
      await ended;
    }

    expect(lines.join('\n')).toContain('cluster 127.0.0.1:1');
    expect(lines.join('\n')).toContain('primary mymaster via sentinels 127.0.0.1:1');
    expect(JSON.stringify(fields)).not.toMatch(/cluster-secret|sentinel-secret/);
  });

  it('logs through a Nest Logger in context Redis when given no logger', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);

    redis = createRedisConnection({ url: REFUSED_URL, commandTimeoutMs: 100 });
    await reconnects(redis, 2);

    expect(warn.mock.calls).toEqual([
      [expect.objectContaining({ msg: 'redis: cannot connect to 127.0.0.1:1 (ECONNREFUSED); retrying' })],
    ]);
    expect((warn.mock.contexts[0] as { context?: string }).context).toBe('Redis');
  });
});

describeRedisServer('createRedisConnection across a Redis restart (a private redis-server)', () => {
  let server: PrivateRedis;
  let redis: Redis | undefined;

  beforeAll(async () => {
    server = await PrivateRedis.start();
  });

  afterAll(async () => {
    redis?.disconnect();
    await server?.dispose();
  });

  it('logs connected, lost and connected again, one line each, and nothing while Redis stays down', async () => {
    const { logger, lines, fields } = recordingLogger();
    redis = createRedisConnection({ url: server.url, commandTimeoutMs: 500, logger });
    await readyWithin(redis, 5_000);
    expect(lines).toEqual([`log: redis: connected to 127.0.0.1:${server.port}`]);

    await server.stop({ keepData: false });
    await reconnects(redis, 3);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(
      new RegExp(`^warn: redis: connection to 127\\.0\\.0\\.1:${server.port} lost \\(.+\\); reconnecting$`),
    );
    expect(fields.map((line) => line.state)).toEqual(['connected', 'lost']);

    await server.start();
    await readyWithin(redis, 5_000);
    expect(redis.status).toBe('ready');
    expect(lines).toEqual([
      `log: redis: connected to 127.0.0.1:${server.port}`,
      lines[1],
      `log: redis: connected to 127.0.0.1:${server.port}`,
    ]);
  });
});
