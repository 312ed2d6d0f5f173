import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type Redis from 'ioredis';
import { FakeClock } from '../common/fake-clock';
import { RedisKeys, RedisTime } from '../store/redis-keys';
import { MemoryRateLimitStore } from './memory-rate-limit.store';
import type { BucketRule } from './rate-limit.store';
import { describeRateLimitStore } from './rate-limit-store.contract';
import { RedisRateLimitStore } from './redis-rate-limit.store';
import { closeRedis, connectRedis, keysUnder, redisNow } from '../../test/support/redis';
import { describeRedis } from '../../test/support/redis-availability';

/** Every key this file writes is under this prefix, one sub-prefix per store. */
const RUN_PREFIX = `bh-test:${randomUUID()}:`;
const SECOND = 1_000;

const RPM_60: BucketRule = { name: 'rpm', perMinute: 60 };
const TPM_1000: BucketRule = { name: 'tpm', perMinute: 1000 };

let redis: Redis;
let stores = 0;

/** A store on a prefix of its own, on `clock` through RedisTime (Redis TIME without one). */
function redisStore(clock?: FakeClock, connection: Redis = redis) {
  const keys = new RedisKeys(`${RUN_PREFIX}${++stores}:`);
  return { keys, store: new RedisRateLimitStore(connection, keys, new RedisTime(clock)) };
}

async function deleteRunKeys(): Promise<void> {
  const keys = await keysUnder(redis, RUN_PREFIX);
  if (keys.length > 0) await redis.del(...keys);
}

describeRedis('RedisRateLimitStore', () => {
  beforeAll(async () => {
    redis = await connectRedis();
  });

  afterAll(async () => {
    await deleteRunKeys();
    await closeRedis(redis);
  });

  describeRateLimitStore('RedisRateLimitStore', (clock) => redisStore(clock).store, deleteRunKeys);

  let clock: FakeClock;

  beforeEach(() => {
    clock = new FakeClock();
  });

  afterEach(deleteRunKeys);

  it('keeps all buckets of a key in one hash under the prefix, with the key as hash tag', async () => {
    const { keys, store } = redisStore(clock);

    await store.take('acme', [RPM_60, TPM_1000], [1, 100]);
    await store.take('globex', [RPM_60], [1]);

    const written = (await keysUnder(redis, keys.prefix)).sort();
    expect(written).toEqual([`${keys.prefix}{acme}:rl`, `${keys.prefix}{globex}:rl`]);
    expect(store.hashKey('acme')).toBe(`${keys.prefix}{acme}:rl`);
    expect(await redis.hkeys(store.hashKey('acme'))).toEqual(
      expect.arrayContaining(['rpm:u', 'rpm:at', 'rpm:full', 'tpm:u', 'tpm:at', 'tpm:full']),
    );
  });

  it('sets a TTL of the longest refill plus 1 s on every write', async () => {
    const { store } = redisStore(clock);

    await store.take('acme', [RPM_60, TPM_1000], [1, 500]);
    const ttl = await redis.pttl(store.hashKey('acme'));
    expect(ttl).toBeGreaterThan(30 * SECOND);
    expect(ttl).toBeLessThanOrEqual(31 * SECOND);

    await store.adjust('acme', [TPM_1000], [400]);
    const shorter = await redis.pttl(store.hashKey('acme'));
    expect(shorter).toBeGreaterThan(5 * SECOND);
    expect(shorter).toBeLessThanOrEqual(7 * SECOND);
  });

  it('keeps the TTL long enough for a bucket the latest decision did not name', async () => {
    const { store } = redisStore(clock);

    await store.take('acme', [TPM_1000], [1000]);
    clock.advance(10 * SECOND);
    await store.take('acme', [RPM_60], [1]);

    const ttl = await redis.pttl(store.hashKey('acme'));
    expect(ttl).toBeGreaterThan(50 * SECOND);
    expect(ttl).toBeLessThanOrEqual(51 * SECOND);
  });

  it('keeps a hash in overage past 60 s', async () => {
    const { store } = redisStore(clock);

    await store.adjust('acme', [TPM_1000], [-2000]);

    const ttl = await redis.pttl(store.hashKey('acme'));
    expect(ttl).toBeGreaterThan(120 * SECOND);
    expect(ttl).toBeLessThanOrEqual(121 * SECOND);
  });

  it('deletes the hash once every bucket is full again, and writes nothing for a refused take', async () => {
    const { store } = redisStore(clock);

    await store.take('acme', [RPM_60], [61]);
    await expect(redis.exists(store.hashKey('acme'))).resolves.toBe(0);

    await store.take('acme', [RPM_60, TPM_1000], [1, 10]);
    await expect(redis.exists(store.hashKey('acme'))).resolves.toBe(1);
    await store.adjust('acme', [RPM_60, TPM_1000], [1, 10]);
    await expect(redis.exists(store.hashKey('acme'))).resolves.toBe(0);
  });

  it('decides on Redis TIME when given no clock', async () => {
    const { store } = redisStore();
    const before = await redisNow(redis);

    await expect(store.take('acme', [RPM_60], [1])).resolves.toEqual({
      allowed: true,
      retryAfterMs: 0,
      buckets: [{ name: 'rpm', remaining: 59, resetMs: SECOND }],
    });

    const after = await redisNow(redis);
    const at = Number(await redis.hget(store.hashKey('acme'), 'rpm:at'));
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
    expect(Math.abs(at - Date.now())).toBeLessThan(5 * SECOND);
    expect(await redis.pttl(store.hashKey('acme'))).toBeGreaterThan(0);
  });

  it('decides on the test clock when given one', async () => {
    const { store } = redisStore(clock);
    clock.advance(1234);

    await store.take('acme', [RPM_60], [1]);

    await expect(redis.hget(store.hashKey('acme'), 'rpm:at')).resolves.toBe(String(clock.wallNow()));
  });

  it('admits exactly 10 of 100 concurrent takes spread over two replicas', async () => {
    const other = await connectRedis();
    try {
      const { keys, store: first } = redisStore(clock);
      const second = new RedisRateLimitStore(other, keys, new RedisTime(clock));

      const decisions = await Promise.all(
        Array.from({ length: 100 }, (_, index) => (index % 2 ? first : second).take('acme', [RPM_60], [6])),
      );

      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(10);
    } finally {
      await closeRedis(other);
    }
  });

  it('keeps fractional levels in the hash, untruncated', async () => {
    const { store } = redisStore(clock);
    const rule: BucketRule = { name: 'tpm', perMinute: 7 };

    await store.adjust('acme', [rule], [-0.123456789]);
    await store.adjust('acme', [rule], [-6.5]);

    // Levels are kept in 1/60 000 tokens: (7 − 6.623456789) × 60 000.
    const units = Number(await redis.hget(store.hashKey('acme'), 'tpm:u'));
    expect(units).toBeCloseTo((7 - 6.623456789) * 60_000, 6);
    const memory = new MemoryRateLimitStore(clock);
    await memory.adjust('acme', [rule], [-0.123456789]);
    await memory.adjust('acme', [rule], [-6.5]);
    clock.advance(1);
    await expect(store.take('acme', [rule], [1])).resolves.toEqual(await memory.take('acme', [rule], [1]));
  });

  it('decides like the memory store on any sequence of takes, adjusts and waits', async () => {
    const rules: BucketRule[] = [
      { name: 'rpm', perMinute: 7 },
      { name: 'tpm', perMinute: 1000 },
    ];
    const step = fc.oneof(
      fc.record({
        kind: fc.constant('take' as const),
        key: fc.constantFrom('a', 'b'),
        amounts: fc.tuple(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 1200 })),
      }),
      fc.record({
        kind: fc.constant('adjust' as const),
        key: fc.constantFrom('a', 'b'),
        amounts: fc.tuple(fc.integer({ min: -10, max: 10 }), fc.integer({ min: -1500, max: 1500 })),
      }),
      fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 20 * SECOND }) }),
    );

    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 25 }), async (steps) => {
        const stepClock = new FakeClock();
        const memory = new MemoryRateLimitStore(stepClock);
        const { store } = redisStore(stepClock);

        for (const next of steps) {
          if (next.kind === 'advance') {
            stepClock.advance(next.ms);
          } else if (next.kind === 'adjust') {
            await memory.adjust(next.key, rules, next.amounts);
            await store.adjust(next.key, rules, next.amounts);
          } else {
            const expected = await memory.take(next.key, rules, next.amounts);
            await expect(store.take(next.key, rules, next.amounts)).resolves.toEqual(expected);
          }
        }
        for (const key of ['a', 'b']) {
          await expect(store.take(key, rules, [0, 0])).resolves.toEqual(await memory.take(key, rules, [0, 0]));
        }
      }),
      { numRuns: 40 },
    );
  });
});
