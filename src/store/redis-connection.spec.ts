import type { Socket } from 'node:net';
import type Redis from 'ioredis';
import { connectRedis, deleteKeysUnder, uniquePrefix } from '../../test/support/redis';
import { batchWritesThisTick, createRedisConnection } from './redis-connection';

const socketOf = (redis: Redis) => (redis as unknown as { stream: Socket }).stream;
const nextTick = () => new Promise<void>((resolve) => process.nextTick(resolve));

describe('batchWritesThisTick (a real Redis on 127.0.0.1:6379)', () => {
  let redis: Redis;
  const prefix = uniquePrefix('bh-test-batch');

  beforeAll(async () => {
    redis = await connectRedis();
  });

  afterAll(async () => {
    await deleteKeysUnder(redis, prefix);
    await redis.quit();
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
    const idle = createRedisConnection({ url: 'redis://127.0.0.1:6379', commandTimeoutMs: 100 });
    idle.disconnect();

    expect(() => batchWritesThisTick(idle)).not.toThrow();
  });
});
