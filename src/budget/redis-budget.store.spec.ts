import { FakeClock } from '../common/fake-clock';
import { createRedisConnection } from '../store/redis-connection';
import { RedisKeys, RedisTime } from '../store/redis-keys';
import { RedisReplyError } from '../store/redis-reply';
import { describeBudgetStore } from './budget-store.contract';
import { BUDGET_KEY_RETENTION_MS, RedisBudgetStore } from './redis-budget.store';
import {
  closeRedis,
  connectRedis,
  hashTag,
  keysUnder,
  redisNow,
  RedisTestRun,
  silentLogger,
} from '../../test/support/redis';
import { describeRedis } from '../../test/support/redis-availability';

const DAY = 'day:2026-01-01';
const TTL_MS = 60_000;
const DAY_MS = 24 * 60 * 60 * 1000;

describeRedis('RedisBudgetStore', () => {
  const run = RedisTestRun.setUp();

  describeBudgetStore(
    'RedisBudgetStore',
    (clock) => new RedisBudgetStore(run.redis, new RedisKeys(run.prefix()), new RedisTime(clock)),
  );

  describe('keys', () => {
    it('puts the keys of a period under the prefix with the tenant as hash tag, and every key has a TTL', async () => {
      const prefix = run.prefix();
      const store = new RedisBudgetStore(run.redis, new RedisKeys(prefix), new RedisTime(new FakeClock()));
      await store.reserve('acme', DAY, 10_000, 'r1', 1_000, TTL_MS);
      await store.reserve('acme', DAY, 10_000, 'r2', 1_000, TTL_MS);
      await store.settle('acme', DAY, 'r1', 500);

      const keys = (await keysUnder(run.redis, prefix)).sort();

      expect(keys).toEqual(
        ['expiries', 'reservations', 'totals'].map((kind) => `${prefix}{acme}:budget:${DAY}:${kind}`),
      );
      expect(new Set(keys.map(hashTag))).toEqual(new Set(['acme']));
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

    it('keeps the keys at least as long as a renewed reservation holds', async () => {
      const store = new RedisBudgetStore(run.redis, new RedisKeys(run.prefix()), new RedisTime(new FakeClock()));
      await store.reserve('acme', DAY, 10_000, 'r1', 1_000, TTL_MS);

      await expect(store.renew('acme', DAY, 'r1', 40 * DAY_MS)).resolves.toBe(true);

      for (const key of store.keysOf('acme', DAY)) {
        expect(await run.redis.pttl(key)).toBeGreaterThan(40 * DAY_MS - 60_000);
      }
    });

    it('sets the TTLs again on every write: a settle, and a read that drops lapsed reservations', async () => {
      const clock = new FakeClock();
      const store = new RedisBudgetStore(run.redis, new RedisKeys(run.prefix()), new RedisTime(clock));
      const keys = store.keysOf('acme', DAY);
      await store.reserve('acme', DAY, 10_000, 'r1', 1_000, TTL_MS);
      await store.reserve('acme', DAY, 10_000, 'r2', 1_000, TTL_MS);
      await store.reserve('acme', DAY, 10_000, 'r3', 1_000, 2 * TTL_MS);

      await store.settle('acme', DAY, 'r1', 1_000);
      for (const key of keys) await run.redis.persist(key);
      clock.advance(TTL_MS);
      await store.read('acme', DAY);

      for (const key of keys) expect(await run.redis.pttl(key)).toBeGreaterThan(0);
      expect(await run.redis.hkeys(keys[1])).toEqual(['r3']);
      expect(await run.redis.zrange(keys[2], 0, -1)).toEqual(['r3']);
    });

    it('writes nothing for a read of a tenant never used, nor for a refused reserve or a renew of nothing', async () => {
      const prefix = run.prefix();
      const store = new RedisBudgetStore(run.redis, new RedisKeys(prefix), new RedisTime(new FakeClock()));

      await store.read('acme', DAY);
      await store.reserve('acme', DAY, 100, 'r1', 1_000, TTL_MS);
      await store.settle('acme', DAY, 'r1', 1_000);
      await store.renew('acme', DAY, 'r1', TTL_MS);

      expect(await keysUnder(run.redis, prefix)).toEqual([]);
    });
  });

  describe('time', () => {
    it('stamps reservations with Redis TIME when given no clock', async () => {
      const store = new RedisBudgetStore(run.redis, new RedisKeys(run.prefix()), new RedisTime());
      const before = await redisNow(run.redis);

      await store.reserve('acme', DAY, 10_000, 'r1', 1_000, TTL_MS);

      const after = await redisNow(run.redis);
      const [, reservations, expiries] = store.keysOf('acme', DAY);
      expect(await run.redis.hget(reservations, 'r1')).toBe('1000');
      const expiresAt = Number(await run.redis.zscore(expiries, 'r1'));
      expect(expiresAt).toBeGreaterThanOrEqual(before + TTL_MS);
      expect(expiresAt).toBeLessThanOrEqual(after + TTL_MS);
    });

    it('renews reservations from Redis TIME when given no clock', async () => {
      const store = new RedisBudgetStore(run.redis, new RedisKeys(run.prefix()), new RedisTime());
      await store.reserve('acme', DAY, 10_000, 'r1', 1_000, TTL_MS);
      const before = await redisNow(run.redis);

      await expect(store.renew('acme', DAY, 'r1', 2 * TTL_MS)).resolves.toBe(true);

      const after = await redisNow(run.redis);
      const expiresAt = Number(await run.redis.zscore(store.keysOf('acme', DAY)[2], 'r1'));
      expect(expiresAt).toBeGreaterThanOrEqual(before + 2 * TTL_MS);
      expect(expiresAt).toBeLessThanOrEqual(after + 2 * TTL_MS);
    });

    it('lapses reservations by Redis TIME when given no clock', async () => {
      const store = new RedisBudgetStore(run.redis, new RedisKeys(run.prefix()), new RedisTime());
      const [totals, reservations, expiries] = store.keysOf('acme', DAY);
      const now = await redisNow(run.redis);
      // Written as a replica would have: one lapsed a second ago by Redis time, one holding for a minute.
      await run.redis.hset(totals, 'reserved', 3_000);
      await run.redis.hset(reservations, 'lapsed', 1_000, 'holding', 2_000);
      await run.redis.zadd(expiries, now - 1_000, 'lapsed', now + 60_000, 'holding');

      const usage = await store.read('acme', DAY);

      expect(usage).toEqual({ spentMicros: 0, reservedMicros: 2_000 });
      expect(await run.redis.hkeys(reservations)).toEqual(['holding']);
      expect(await run.redis.zrange(expiries, 0, -1)).toEqual(['holding']);
      await expect(store.settle('acme', DAY, 'lapsed', 1_000)).resolves.toBe(false);
      await expect(store.settle('acme', DAY, 'holding', 1_500)).resolves.toBe(true);
      await expect(store.read('acme', DAY)).resolves.toEqual({ spentMicros: 1_500, reservedMicros: 0 });
    });
  });

  describe('cost', () => {
    // A tenant's in-flight calls each hold a reservation; a decision must not walk them all, or
    // Redis (one thread for the fleet) slows with every call a busy tenant has in flight.
    it('reserves, settles, renews and reads without walking the reservations held', async () => {
      const prefix = run.prefix();
      const store = new RedisBudgetStore(run.redis, new RedisKeys(prefix), new RedisTime(new FakeClock()));
      const held = 1_000;
      await Promise.all(
        Array.from({ length: held }, (_, i) => store.reserve('acme', DAY, 1e12, `held-${i}`, 1, TTL_MS)),
      );
      const watcher = await connectRedis();
      const monitor = await watcher.monitor();
      const commands: string[][] = [];
      const marker = `end-of-test-${prefix}`;
      const ended = new Promise<void>((done) =>
        monitor.on('monitor', (_time: string, args: string[]) => {
          if (args[1] === marker) done();
          else if (args.some((arg) => arg.startsWith(prefix))) commands.push(args);
        }),
      );
      try {
        await store.reserve('acme', DAY, 1e12, 'r1', 1, TTL_MS);
        await store.settle('acme', DAY, 'r1', 1);
        await expect(store.renew('acme', DAY, 'held-0', 2 * TTL_MS)).resolves.toBe(true);
        await expect(store.read('acme', DAY)).resolves.toEqual({ spentMicros: 1, reservedMicros: held });
        await expect(store.reserve('acme', DAY, 1e12, 'r2', 1e12 - 1, TTL_MS)).resolves.toMatchObject({
          ok: false,
          cause: 'held',
          nextLapseInMs: TTL_MS,
        });
        await run.redis.echo(marker);
        await ended;
      } finally {
        monitor.disconnect();
        await closeRedis(watcher);
      }

      const names = commands.map(([name]) => name.toLowerCase());
      expect(names.filter((name) => name === 'evalsha')).toHaveLength(5);
      expect(names).not.toEqual(expect.arrayContaining(['hgetall']));
      expect(names.filter((name) => ['hkeys', 'hvals', 'hscan', 'zscan', 'smembers'].includes(name))).toEqual([]);
      // The sorted set is read at its ends only: the lapsed ones (none here), the latest expiry,
      // and the earliest for a refusal that only the reservations held cause.
      const ranges = commands
        .filter(([name]) => name.toLowerCase() === 'zrange')
        .map((args) => args.slice(2).join(' ').toUpperCase());
      expect(ranges).toContain('-1 -1 WITHSCORES');
      expect(ranges).toContain('0 0 WITHSCORES');
      expect(ranges.every((range) => ['-1 -1 WITHSCORES', '0 0 WITHSCORES'].includes(range))).toBe(true);
    });
    it('frees every lapsed reservation at once, however many (a replica that died holding them)', async () => {
      const clock = new FakeClock();
      const store = new RedisBudgetStore(run.redis, new RedisKeys(run.prefix()), new RedisTime(clock));
      const lapsing = 2_500;
      await Promise.all(
        Array.from({ length: lapsing }, (_, i) => store.reserve('acme', DAY, 1e12, `gone-${i}`, 2, TTL_MS)),
      );
      await store.reserve('acme', DAY, 1e12, 'holding', 7, 2 * TTL_MS);
      clock.advance(TTL_MS);

      await expect(store.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 7 });

      const [totals, reservations, expiries] = store.keysOf('acme', DAY);
      expect(await run.redis.hlen(reservations)).toBe(1);
      expect(await run.redis.zcard(expiries)).toBe(1);
      expect(await run.redis.hget(totals, 'reserved')).toBe('7');
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

    it('never overspends when calls on two connections hold one attempt at a time, and says why it refuses', async () => {
      const other = await run.connection();
      const keys = new RedisKeys(run.prefix());
      const replicas = [run.redis, other].map((connection) => new RedisBudgetStore(connection, keys, new RedisTime()));
      const causes: string[] = [];

      // Ten calls of up to three attempts, alternating replicas; each attempt charges what it held.
      const attemptsMade = await Promise.all(
        Array.from({ length: 10 }, async (_, call) => {
          let made = 0;
          for (let attempt = 1; attempt <= 3; attempt++) {
            const replica = replicas[(call + attempt) % 2];
            const id = `c${call}-a${attempt}`;
            const held = await replica.reserve('acme', DAY, 3_000, id, 1_000, TTL_MS);
            if (!held.ok) {
              causes.push(held.cause);
              if (held.cause === 'held') expect(held.nextLapseInMs).toBeLessThanOrEqual(TTL_MS);
              break;
            }
            made++;
            await replica.settle('acme', DAY, id, 1_000);
          }
          return made;
        }),
      );

      expect(attemptsMade.reduce((sum, made) => sum + made, 0)).toBe(3);
      expect(causes).toHaveLength(10 - attemptsMade.filter((made) => made === 3).length);
      await expect(replicas[0].read('acme', DAY)).resolves.toEqual({ spentMicros: 3_000, reservedMicros: 0 });
      await expect(replicas[1].reserve('acme', DAY, 3_000, 'late', 1_000, TTL_MS)).resolves.toEqual({
        ok: false,
        cause: 'cap',
        spentMicros: 3_000,
        reservedMicros: 0,
      });
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

    it('keeps on one replica a reservation renewed on another, until it settles once', async () => {
      const other = await run.connection();
      const keys = new RedisKeys(run.prefix());
      const clock = new FakeClock();
      const [first, second] = [run.redis, other].map(
        (connection) => new RedisBudgetStore(connection, keys, new RedisTime(clock)),
      );
      await first.reserve('acme', DAY, 3_000, 'r1', 3_000, TTL_MS);
      clock.advance(TTL_MS - 1);

      await expect(second.renew('acme', DAY, 'r1', TTL_MS)).resolves.toBe(true);
      clock.advance(TTL_MS - 1);

      await expect(first.reserve('acme', DAY, 3_000, 'r2', 1, TTL_MS)).resolves.toMatchObject({
        ok: false,
        cause: 'held',
        nextLapseInMs: 1,
      });
      await expect(first.settle('acme', DAY, 'r1', 2_000)).resolves.toBe(true);
      await expect(second.renew('acme', DAY, 'r1', TTL_MS)).resolves.toBe(false);
      await expect(second.read('acme', DAY)).resolves.toEqual({ spentMicros: 2_000, reservedMicros: 0 });
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
    const down = createRedisConnection({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 200, logger: silentLogger });
    const store = new RedisBudgetStore(down, new RedisKeys(run.prefix()), new RedisTime(new FakeClock()));
    try {
      await expect(store.reserve('acme', DAY, 3_000, 'r1', 1_000, TTL_MS)).rejects.toThrow();
      await expect(store.settle('acme', DAY, 'r1', 1_000)).rejects.toThrow();
      await expect(store.read('acme', DAY)).rejects.toThrow();
      await expect(store.renew('acme', DAY, 'r1', TTL_MS)).rejects.toThrow();
    } finally {
      down.disconnect();
    }
  });

  describe('a period another program damaged', () => {
    it.each([
      ['a spent that is not a number', 'abc'],
      ['a spent past 2^53', '1e300'],
      ['a negative spent', '-5'],
    ])('rejects a read of %s with RedisReplyError, never a NaN in the books', async (_label, spent) => {
      const store = new RedisBudgetStore(run.redis, new RedisKeys(run.prefix()), new RedisTime(new FakeClock()));
      await store.reserve('acme', DAY, 10_000, 'r1', 1_000, TTL_MS);
      await run.redis.hset(store.keysOf('acme', DAY)[0], 'spent', spent);

      await expect(store.read('acme', DAY)).rejects.toThrow(RedisReplyError);
      // A reserve fails too (Lua's own error for a spent it cannot add): never admitted on a damaged total.
      await expect(store.reserve('acme', DAY, 10_000, 'r2', 1_000, TTL_MS)).rejects.toThrow();
    });
  });
});
