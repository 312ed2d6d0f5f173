import { FakeClock } from '../common/fake-clock';
import { createRedisConnection } from '../store/redis-connection';
import { RedisKeys, RedisTime } from '../store/redis-keys';
import { describeBudgetStore } from './budget-store.contract';
import { BUDGET_KEY_RETENTION_MS, RedisBudgetStore } from './redis-budget.store';
import { hashTag, keysUnder, redisNow, RedisTestRun } from '../../test/support/redis';

const DAY = 'day:2026-01-01';
const TTL_MS = 60_000;
const DAY_MS = 24 * 60 * 60 * 1000;

describe('RedisBudgetStore', () => {
  const run = RedisTestRun.setUp();

  describeBudgetStore(
    'RedisBudgetStore',
    (clock) => new RedisBudgetStore(run.redis, new RedisKeys(run.prefix()), new RedisTime(clock)),
  );

  describe('keys', () => {
    it('puts both keys of a period under the prefix with one hash tag, and every key has a TTL', async () => {
      const prefix = run.prefix();
      const store = new RedisBudgetStore(run.redis, new RedisKeys(prefix), new RedisTime(new FakeClock()));
      await store.reserve('acme', DAY, 10_000, 'r1', 1_000, TTL_MS);
      await store.reserve('acme', DAY, 10_000, 'r2', 1_000, TTL_MS);
      await store.settle('acme', DAY, 'r1', 500);

      const keys = (await keysUnder(run.redis, prefix)).sort();

      expect(keys).toEqual([`${prefix}{acme:${DAY}}:reservations`, `${prefix}{acme:${DAY}}:spent`]);
      expect(new Set(keys.map(hashTag))).toEqual(new Set([`acme:${DAY}`]));
      for (const key of keys) {
        const ttl = await run.redis.pttl(key);
        expect(ttl).toBeGreaterThan(BUDGET_KEY_RETENTION_MS - 60_000);
        expect(ttl).toBeLessThanOrEqual(BUDGET_KEY_RETENTION_MS);
      }
    });

    it('keeps the keys at least as long as the longest reservation holds', async () => {
      const prefix = run.prefix();
      const store = new RedisBudgetStore(run.redis, new RedisKeys(prefix), new RedisTime(new FakeClock()));
      await store.reserve('acme', DAY, 10_000, 'short', 1_000, TTL_MS);
      await store.reserve('acme', DAY, 10_000, 'long', 1_000, 40 * DAY_MS);
      await store.settle('acme', DAY, 'short', 1_000);

      for (const key of store.keysOf('acme', DAY)) {
        expect(await run.redis.pttl(key)).toBeGreaterThan(40 * DAY_MS - 60_000);
      }
    });

    it('sets the TTLs again on every write: a settle, and a read that drops lapsed reservations', async () => {
      const clock = new FakeClock();
      const store = new RedisBudgetStore(run.redis, new RedisKeys(run.prefix()), new RedisTime(clock));
      const [spent, reservations] = store.keysOf('acme', DAY);
      await store.reserve('acme', DAY, 10_000, 'r1', 1_000, TTL_MS);
      await store.reserve('acme', DAY, 10_000, 'r2', 1_000, TTL_MS);
      await store.reserve('acme', DAY, 10_000, 'r3', 1_000, 2 * TTL_MS);

      await store.settle('acme', DAY, 'r1', 1_000);
      await run.redis.persist(spent);
      await run.redis.persist(reservations);
      clock.advance(TTL_MS);
      await store.read('acme', DAY);

      expect(await run.redis.pttl(spent)).toBeGreaterThan(0);
      expect(await run.redis.pttl(reservations)).toBeGreaterThan(0);
      expect(await run.redis.hkeys(reservations)).toEqual(['r3']);
    });

    it('writes nothing for a read of a tenant never used, nor for a refused reserve', async () => {
      const prefix = run.prefix();
      const store = new RedisBudgetStore(run.redis, new RedisKeys(prefix), new RedisTime(new FakeClock()));

      await store.read('acme', DAY);
      await store.reserve('acme', DAY, 100, 'r1', 1_000, TTL_MS);
      await store.settle('acme', DAY, 'r1', 1_000);

      expect(await keysUnder(run.redis, prefix)).toEqual([]);
    });
  });

  describe('time', () => {
    it('stamps reservations with Redis TIME when given no clock', async () => {
      const store = new RedisBudgetStore(run.redis, new RedisKeys(run.prefix()), new RedisTime());
      const before = await redisNow(run.redis);

      await store.reserve('acme', DAY, 10_000, 'r1', 1_000, TTL_MS);

      const after = await redisNow(run.redis);
      const [amount, expiresAt] = (await run.redis.hget(store.keysOf('acme', DAY)[1], 'r1'))!.split(':').map(Number);
      expect(amount).toBe(1_000);
      expect(expiresAt).toBeGreaterThanOrEqual(before + TTL_MS);
      expect(expiresAt).toBeLessThanOrEqual(after + TTL_MS);
    });

    it('lapses reservations by Redis TIME when given no clock', async () => {
      const store = new RedisBudgetStore(run.redis, new RedisKeys(run.prefix()), new RedisTime());
      const reservations = store.keysOf('acme', DAY)[1];
      const now = await redisNow(run.redis);
      // Written as a replica would have: one lapsed a second ago by Redis time, one holding for a minute.
      await run.redis.hset(reservations, 'lapsed', `1000:${now - 1_000}`, 'holding', `2000:${now + 60_000}`);

      const usage = await store.read('acme', DAY);

      expect(usage).toEqual({ spentMicros: 0, reservedMicros: 2_000 });
      expect(await run.redis.hkeys(reservations)).toEqual(['holding']);
      await expect(store.settle('acme', DAY, 'lapsed', 1_000)).resolves.toBe(false);
      await expect(store.settle('acme', DAY, 'holding', 1_500)).resolves.toBe(true);
      await expect(store.read('acme', DAY)).resolves.toEqual({ spentMicros: 1_500, reservedMicros: 0 });
    });
  });

  describe('replicas', () => {
    it('admits exactly 3 of 10 concurrent reserves spread over two connections', async () => {
      const other = await run.connection();
      const keys = new RedisKeys(run.prefix());
      const replicas = [run.redis, other].map((connection) => new RedisBudgetStore(connection, keys, new RedisTime()));

      const results = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          replicas[index % 2].reserve('acme', DAY, 3_000, `r${index}`, 1_000, TTL_MS),
        ),
      );

      expect(results.filter((result) => result.ok)).toHaveLength(3);
      await expect(replicas[1].read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 3_000 });
    });

    it('settles on one replica a reservation made on another, once', async () => {
      const other = await run.connection();
      const keys = new RedisKeys(run.prefix());
      const [first, second] = [run.redis, other].map(
        (connection) => new RedisBudgetStore(connection, keys, new RedisTime()),
      );
      await first.reserve('acme', DAY, 3_000, 'r1', 1_000, TTL_MS);

      await expect(second.settle('acme', DAY, 'r1', 700)).resolves.toBe(true);
      await expect(first.settle('acme', DAY, 'r1', 700)).resolves.toBe(false);

      await expect(first.read('acme', DAY)).resolves.toEqual({ spentMicros: 700, reservedMicros: 0 });
    });
  });

  it('keeps amounts up to 2^53 - 1 micro-dollars exact', async () => {
    const store = new RedisBudgetStore(run.redis, new RedisKeys(run.prefix()), new RedisTime(new FakeClock()));
    const max = Number.MAX_SAFE_INTEGER;

    await expect(store.reserve('acme', DAY, max, 'r1', max - 1, TTL_MS)).resolves.toEqual({
      ok: true,
      spentMicros: 0,
      reservedMicros: max - 1,
    });
    await store.settle('acme', DAY, 'r1', max - 2);

    await expect(store.read('acme', DAY)).resolves.toEqual({ spentMicros: max - 2, reservedMicros: 0 });
    await expect(store.reserve('acme', DAY, max, 'r2', 3, TTL_MS)).resolves.toMatchObject({ ok: false });
  });

  it('rejects at once, without waiting for Redis, while Redis is unreachable', async () => {
    const down = createRedisConnection({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 200 });
    down.on('error', () => undefined);
    const store = new RedisBudgetStore(down, new RedisKeys(run.prefix()), new RedisTime(new FakeClock()));
    try {
      await expect(store.reserve('acme', DAY, 3_000, 'r1', 1_000, TTL_MS)).rejects.toThrow();
      await expect(store.settle('acme', DAY, 'r1', 1_000)).rejects.toThrow();
      await expect(store.read('acme', DAY)).rejects.toThrow();
    } finally {
      down.disconnect();
    }
  });
});
