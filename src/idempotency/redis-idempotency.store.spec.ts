import { FakeClock } from '../common/fake-clock';
import { RedisKeys, RedisTime } from '../store/redis-keys';
import { describeIdempotencyStore } from './idempotency-store.contract';
import type { StoredOutcome } from './idempotency.store';
import { REDIS_IDEMPOTENCY_TTL_MARGIN_MS, RedisIdempotencyStore } from './redis-idempotency.store';
import { RedisTestRun } from '../../test/support/redis';
import { describeRedis } from '../../test/support/redis-availability';

const LEASE_MS = 5_000;
const RETENTION_MS = 60_000;
const FP = 'fp';
const OUTCOME: StoredOutcome = { ok: true, result: { id: 'ord_1' }, attempts: 1, pool: 'normal' };

/**
 * Contract tests about evicting completed keys by count. Redis bounds its records with TTLs
 * instead (see {@link RedisIdempotencyStore}), so these cannot hold there; the contract's
 * other `bound` tests (nothing in flight is ever evicted) run as written.
 */

describeRedis('RedisIdempotencyStore', () => {
  const run = RedisTestRun.setUp();

  describeIdempotencyStore(
    'RedisIdempotencyStore',
    // Counts and totals in bytes are the memory store's bounds; Redis bounds records by TTL.
    (clock, bounds) => new RedisIdempotencyStore(run.redis, run.keys(), new RedisTime(clock), bounds),
    { evictsByCount: false, boundsBytesInAll: false },
  );

  describe('keys and TTLs', () => {
    let keys: RedisKeys;
    let clock: FakeClock;
    let store: RedisIdempotencyStore;

    beforeEach(() => {
      keys = run.keys();
      clock = new FakeClock();
      store = new RedisIdempotencyStore(run.redis, keys, new RedisTime(clock));
    });

    it('keeps one hash per key under the prefix, with the key as its hash tag', async () => {
      await store.claim('scoped-key', FP, LEASE_MS, 'tenant');

      const [, found] = await run.redis.scan('0', 'MATCH', `${keys.prefix}*`, 'COUNT', 1000);
      expect(found).toEqual([`${keys.prefix}{scoped-key}:idem`]);
      await expect(run.redis.type(found[0])).resolves.toBe('hash');
    });

    it('sets a TTL of the lease plus the margin on a claim', async () => {
      await store.claim('key-a', FP, LEASE_MS, 'tenant');

      const ttl = await run.redis.pttl(keys.key('key-a', 'idem'));
      expect(ttl).toBeGreaterThan(LEASE_MS);
      expect(ttl).toBeLessThanOrEqual(LEASE_MS + REDIS_IDEMPOTENCY_TTL_MARGIN_MS);
    });

    it('sets a TTL of the retention plus the margin on a completion', async () => {
      const claim = await store.claim('key-a', FP, LEASE_MS, 'tenant');
      if (claim.status !== 'claimed') throw new Error('expected a claim');

      await store.complete('key-a', claim.token, OUTCOME, RETENTION_MS);

      const ttl = await run.redis.pttl(keys.key('key-a', 'idem'));
      expect(ttl).toBeGreaterThan(RETENTION_MS);
      expect(ttl).toBeLessThanOrEqual(RETENTION_MS + REDIS_IDEMPOTENCY_TTL_MARGIN_MS);
    });

    it('sets a fresh lease TTL when a lapsed claim is taken over', async () => {
      const first = await store.claim('key-a', FP, LEASE_MS, 'tenant');
      if (first.status !== 'claimed') throw new Error('expected a claim');
      await store.complete('key-a', first.token, OUTCOME, 1_000);
      clock.advance(1_000);

      await expect(store.claim('key-a', FP, 2_000, 'tenant')).resolves.toMatchObject({ status: 'claimed' });

      const ttl = await run.redis.pttl(keys.key('key-a', 'idem'));
      expect(ttl).toBeGreaterThan(2_000);
      expect(ttl).toBeLessThanOrEqual(2_000 + REDIS_IDEMPOTENCY_TTL_MARGIN_MS);
      await expect(run.redis.hget(keys.key('key-a', 'idem'), 'outcome')).resolves.toBeNull();
    });

    it('sets a TTL of the renewed lease plus the margin on a renew, and keeps the lease in the record', async () => {
      const claim = await store.claim('key-a', FP, LEASE_MS, 'tenant');
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      clock.advance(1_000);

      await expect(store.renew('key-a', claim.token, 60_000)).resolves.toBe(true);

      const record = keys.key('key-a', 'idem');
      const ttl = await run.redis.pttl(record);
      expect(ttl).toBeGreaterThan(60_000);
      expect(ttl).toBeLessThanOrEqual(60_000 + REDIS_IDEMPOTENCY_TTL_MARGIN_MS);
      await expect(run.redis.hget(record, 'leaseUntil')).resolves.toBe(String(clock.wallNow() + 60_000));
    });

    it('keeps the TTL covering the lease when a renew asks for less than is left', async () => {
      const claim = await store.claim('key-a', FP, 60_000, 'tenant');
      if (claim.status !== 'claimed') throw new Error('expected a claim');

      await expect(store.renew('key-a', claim.token, 1_000)).resolves.toBe(true);

      expect(await run.redis.pttl(keys.key('key-a', 'idem'))).toBeGreaterThan(60_000);
    });

    it('writes nothing for a renew of a key never claimed, released or completed', async () => {
      const released = await store.claim('released', FP, LEASE_MS, 'tenant');
      const completed = await store.claim('completed', FP, LEASE_MS, 'tenant');
      if (released.status !== 'claimed' || completed.status !== 'claimed') throw new Error('expected claims');
      await store.release('released', released.token);
      await store.complete('completed', completed.token, OUTCOME, RETENTION_MS);

      await expect(store.renew('never', 'token', 60 * RETENTION_MS)).resolves.toBe(false);
      await expect(store.renew('released', released.token, 60 * RETENTION_MS)).resolves.toBe(false);
      await expect(store.renew('completed', completed.token, 60 * RETENTION_MS)).resolves.toBe(false);

      await expect(run.redis.exists(keys.key('never', 'idem'), keys.key('released', 'idem'))).resolves.toBe(0);
      expect(await run.redis.pttl(keys.key('completed', 'idem'))).toBeLessThanOrEqual(
        RETENTION_MS + REDIS_IDEMPOTENCY_TTL_MARGIN_MS,
      );
    });

    it('deletes the key on release', async () => {
      const claim = await store.claim('key-a', FP, LEASE_MS, 'tenant');
      if (claim.status !== 'claimed') throw new Error('expected a claim');

      await store.release('key-a', claim.token);

      await expect(run.redis.exists(keys.key('key-a', 'idem'))).resolves.toBe(0);
    });

    it('hands out tokens unique across processes (96 random bits per process, then a counter)', async () => {
      const first = await store.claim('key-a', FP, LEASE_MS, 'tenant');
      const second = await store.claim('key-b', FP, LEASE_MS, 'tenant');

      expect(first).toEqual({ status: 'claimed', token: expect.stringMatching(/^[\w-]{16}-[0-9a-z]+$/) });
      expect(second).toMatchObject({ status: 'claimed' });
      expect(second).not.toEqual(first);
    });
  });

  describe('with Redis TIME', () => {
    it('measures the lease from Redis TIME when no test clock is given', async () => {
      const keys = run.keys();
      const store = new RedisIdempotencyStore(run.redis, keys, new RedisTime());
      const [seconds, micros] = await run.redis.time();
      const before = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);

      await store.claim('key-a', FP, LEASE_MS, 'tenant');

      const leaseUntil = Number(await run.redis.hget(keys.key('key-a', 'idem'), 'leaseUntil'));
      expect(leaseUntil).toBeGreaterThanOrEqual(before + LEASE_MS);
      expect(leaseUntil).toBeLessThan(before + LEASE_MS + 5_000);
      await expect(store.claim('key-a', FP, LEASE_MS, 'tenant')).resolves.toEqual({ status: 'in_flight' });
    });
  });

  describe('two replicas sharing one Redis', () => {
    async function replicas(): Promise<[RedisIdempotencyStore, RedisIdempotencyStore, FakeClock]> {
      const keys = run.keys();
      const clock = new FakeClock();
      const [first, second] = await Promise.all([run.connection(), run.connection()]);
      return [
        new RedisIdempotencyStore(first, keys, new RedisTime(clock)),
        new RedisIdempotencyStore(second, keys, new RedisTime(clock)),
        clock,
      ];
    }

    it('answers in_flight on the other replica while one runs, then the outcome after it completes', async () => {
      const [one, other] = await replicas();
      const claim = await one.claim('key-a', FP, LEASE_MS, 'tenant');
      if (claim.status !== 'claimed') throw new Error('expected a claim');

      await expect(other.claim('key-a', FP, LEASE_MS, 'tenant')).resolves.toEqual({ status: 'in_flight' });
      await expect(other.claim('key-a', 'other-fp', LEASE_MS, 'tenant')).resolves.toEqual({ status: 'conflict' });

      await one.complete('key-a', claim.token, OUTCOME, RETENTION_MS);

      await expect(other.claim('key-a', FP, LEASE_MS, 'tenant')).resolves.toStrictEqual({
        status: 'completed',
        outcome: OUTCOME,
      });
    });

    it('lets the other replica take over once the lease passed, and ignores the first token after', async () => {
      const [one, other, clock] = await replicas();
      const first = await one.claim('key-a', FP, LEASE_MS, 'tenant');
      if (first.status !== 'claimed') throw new Error('expected a claim');
      clock.advance(LEASE_MS);

      const takeover = await other.claim('key-a', FP, LEASE_MS, 'tenant');
      expect(takeover).toMatchObject({ status: 'claimed' });
      await one.complete('key-a', first.token, { ok: false, kind: 'timeout', message: 'late', attempts: 1 }, 1_000);

      await expect(one.claim('key-a', FP, LEASE_MS, 'tenant')).resolves.toEqual({ status: 'in_flight' });
    });

    it('keeps a claim renewed on one replica from being taken over on the other', async () => {
      const [one, other, clock] = await replicas();
      const claim = await one.claim('key-a', FP, LEASE_MS, 'tenant');
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      clock.advance(LEASE_MS - 1);

      await expect(one.renew('key-a', claim.token, LEASE_MS)).resolves.toBe(true);
      clock.advance(LEASE_MS - 1);

      await expect(other.claim('key-a', FP, LEASE_MS, 'tenant')).resolves.toEqual({ status: 'in_flight' });
      clock.advance(1);
      await expect(other.claim('key-a', FP, LEASE_MS, 'tenant')).resolves.toMatchObject({ status: 'claimed' });
      await expect(one.renew('key-a', claim.token, LEASE_MS)).resolves.toBe(false);
    });

    it('gives exactly one of 20 concurrent claims over two replicas the key', async () => {
      const [one, other] = await replicas();

      const claims = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          (index % 2 === 0 ? one : other).claim('key-a', FP, LEASE_MS, 'tenant'),
        ),
      );

      expect(claims.filter((claim) => claim.status === 'claimed')).toHaveLength(1);
      expect(claims.filter((claim) => claim.status === 'in_flight')).toHaveLength(19);
    });
  });
});
