import type { ContainmentChange } from './containment-snapshot';
import { describeContainmentStore } from './containment-store.contract';
import { RedisContainmentStore } from './redis-containment.store';
import { RedisTestRun } from '../../test/support/redis';
import { describeRedis } from '../../test/support/redis-availability';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const ACTIVE_HARD: ContainmentChange = { state: 'active', posture: 'hard', reason: 'incident' };
const NOT_CONTAINED: ContainmentChange = { state: 'not_contained', posture: 'degraded', reason: 'configured tenant' };

describeRedis('RedisContainmentStore', () => {
  const run = RedisTestRun.setUp();

  describeContainmentStore('RedisContainmentStore', () => new RedisContainmentStore(run.redis, run.keys()));

  describe('keys', () => {
    it('keeps one hash per tenant under the prefix, with the tenant as its hash tag', async () => {
      const keys = run.keys();
      const store = new RedisContainmentStore(run.redis, keys);

      await store.write('acme', ACTIVE_HARD, T0);
      await store.seed('globex', NOT_CONTAINED, T0);

      const [, found] = await run.redis.scan('0', 'MATCH', `${keys.prefix}*`, 'COUNT', 1000);
      expect(found.sort()).toEqual([`${keys.prefix}{acme}:containment`, `${keys.prefix}{globex}:containment`]);
      for (const key of found) await expect(run.redis.type(key)).resolves.toBe('hash');
    });

    it('sets no TTL on a snapshot: it must not expire into the isolated pool', async () => {
      const keys = run.keys();
      const store = new RedisContainmentStore(run.redis, keys);

      await store.seed('acme', NOT_CONTAINED, T0);
      await expect(run.redis.pttl(keys.key('acme', 'containment'))).resolves.toBe(-1);
      await store.write('acme', ACTIVE_HARD, T0 + 1);
      await expect(run.redis.pttl(keys.key('acme', 'containment'))).resolves.toBe(-1);
    });

    it.each<[string, Record<string, string>]>([
      ['an unknown state', { state: 'free' }],
      ['an unknown posture', { posture: 'soft' }],
      ['a version that is not a number', { version: 'two' }],
    ])('rejects a read of a snapshot with %s instead of routing on it', async (_label, damage) => {
      const keys = run.keys();
      const store = new RedisContainmentStore(run.redis, keys);
      await store.write('acme', ACTIVE_HARD, T0);

      await run.redis.hset(keys.key('acme', 'containment'), damage);

      await expect(store.read('acme')).rejects.toThrow('malformed containment snapshot');
    });

    it('rejects a read of a snapshot that lost a field', async () => {
      const keys = run.keys();
      const store = new RedisContainmentStore(run.redis, keys);
      await store.write('acme', ACTIVE_HARD, T0);

      await run.redis.hdel(keys.key('acme', 'containment'), 'state');

      await expect(store.read('acme')).rejects.toThrow('malformed containment snapshot');
    });
  });

  describe('two replicas sharing one Redis', () => {
    async function replicas(): Promise<[RedisContainmentStore, RedisContainmentStore]> {
      const keys = run.keys();
      const [first, second] = await Promise.all([run.connection(), run.connection()]);
      return [new RedisContainmentStore(first, keys), new RedisContainmentStore(second, keys)];
    }

    it("reads the other replica's write at once", async () => {
      const [one, other] = await replicas();
      await one.seed('acme', NOT_CONTAINED, T0);
      await expect(other.read('acme')).resolves.toMatchObject({ state: 'not_contained', version: 1 });

      const written = await one.write('acme', ACTIVE_HARD, T0 + 1);

      await expect(other.read('acme')).resolves.toEqual(written);
    });

    it("continues the other replica's versions", async () => {
      const [one, other] = await replicas();

      await one.write('acme', ACTIVE_HARD, T0);
      const second = await other.write('acme', NOT_CONTAINED, T0 + 1);

      expect(second.version).toBe(2);
      await expect(one.read('acme')).resolves.toEqual(second);
    });

    it("answers the other replica's write to a seed, without overwriting it", async () => {
      const [one, other] = await replicas();
      const written = await one.write('acme', ACTIVE_HARD, T0);

      await expect(other.seed('acme', NOT_CONTAINED, T0 + 1)).resolves.toEqual(written);
      await expect(one.read('acme')).resolves.toEqual(written);
    });

    it('gives 20 concurrent writes over two replicas the versions 1 to 20, each once', async () => {
      const [one, other] = await replicas();

      const written = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          (index % 2 === 0 ? one : other).write('acme', { ...ACTIVE_HARD, reason: `write ${index}` }, T0 + index),
        ),
      );

      expect(written.map((snapshot) => snapshot.version).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 20 }, (_, index) => index + 1),
      );
      await expect(other.read('acme')).resolves.toEqual(written.find((snapshot) => snapshot.version === 20));
    });
  });
});
