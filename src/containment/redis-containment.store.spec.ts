import type Redis from 'ioredis';
import { SystemClock } from '../common';
import type { RedisKeys } from '../store/redis-keys';
import { ContainmentCache } from './containment-cache';
import type { ContainmentChange } from './containment-snapshot';
import { describeContainmentStore } from './containment-store.contract';
import { containmentChannel, RedisContainmentStore } from './redis-containment.store';
import { RedisReplyError } from '../store/redis-reply';
import { RedisInvalidations, SUBSCRIBER_CONNECTION_OPTIONS } from './redis-invalidations';
import { closeRedis, RedisTestRun, silentLogger } from '../../test/support/redis';
import { describeRedis } from '../../test/support/redis-availability';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const ACTIVE_HARD: ContainmentChange = { state: 'active', posture: 'hard', reason: 'incident' };
const NOT_CONTAINED: ContainmentChange = { state: 'not_contained', posture: 'degraded', reason: 'configured tenant' };

/** Resolves when `cache` next goes live (true) or off (false). */
function untilLive(cache: ContainmentCache, live: boolean): Promise<void> {
  if (cache.live === live) return Promise.resolve();
  return new Promise((resolve) => {
    const dispose = cache.onLiveChange((now) => {
      if (now !== live) return;
      dispose();
      resolve();
    });
  });
}

/** Resolves on the next message the subscriber connection gets (after the cache has heard it). */
const nextMessage = (subscriber: Redis): Promise<void> =>
  new Promise((resolve) => subscriber.once('message', () => resolve()));

describeRedis('RedisContainmentStore', () => {
  const run = RedisTestRun.setUp();
  const started: Array<{ invalidations: RedisInvalidations; subscriber: Redis }> = [];

  afterEach(async () => {
    for (const { invalidations, subscriber } of started.splice(0)) {
      invalidations.close();
      await closeRedis(subscriber);
    }
  });

  /** A replica's store with its cache, once the cache is live; `subscriber` is its own connection. */
  async function cachedReplica(keys: RedisKeys, redis: Redis = run.redis) {
    const name = `bh-test-sub-${started.length}-${Math.floor(Math.random() * 1e9)}`;
    const subscriber = redis.duplicate({ ...SUBSCRIBER_CONNECTION_OPTIONS, connectionName: name });
    const cache = new ContainmentCache();
    const invalidations = new RedisInvalidations(subscriber, cache, {
      channel: containmentChannel(keys),
      clock: new SystemClock(),
      logger: silentLogger,
    });
    started.push({ invalidations, subscriber });
    await untilLive(cache, true);
    return { store: new RedisContainmentStore(redis, keys, cache), cache, subscriber, name };
  }

  describeContainmentStore('RedisContainmentStore', () => new RedisContainmentStore(run.redis, run.keys()));

  describeContainmentStore(
    'RedisContainmentStore with its cache live',
    async () => (await cachedReplica(run.keys())).store,
  );

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

      await expect(store.read('acme')).rejects.toThrow(RedisReplyError);
    });

    it('rejects a read of a snapshot that lost a field', async () => {
      const keys = run.keys();
      const store = new RedisContainmentStore(run.redis, keys);
      await store.write('acme', ACTIVE_HARD, T0);

      await run.redis.hdel(keys.key('acme', 'containment'), 'state');

      await expect(store.read('acme')).rejects.toThrow(RedisReplyError);
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

  describe('invalidations', () => {
    it('publishes the tenant with every write, and with a seed only when it writes', async () => {
      const keys = run.keys();
      const store = new RedisContainmentStore(run.redis, keys);
      const listener = await run.connection();
      const heard: string[] = [];
      listener.on('message', (_channel: string, tenant: string) => heard.push(tenant));
      await listener.subscribe(containmentChannel(keys));

      await store.seed('acme', NOT_CONTAINED, T0);
      await store.seed('acme', NOT_CONTAINED, T0 + 1);
      await store.write('acme', ACTIVE_HARD, T0 + 2);
      await store.write('globex', ACTIVE_HARD, T0 + 3);
      // A message from after the last write: every one before it has arrived. Listened for
      // before it is sent: it may arrive before the publish's own reply.
      const ended = new Promise<void>((resolve) =>
        listener.on('message', (_c: string, t: string) => t === 'end' && resolve()),
      );
      await run.redis.publish(containmentChannel(keys), 'end');
      await ended;

      expect(heard).toEqual(['acme', 'acme', 'globex', 'end']);
    });

    it('answers a read of a tenant it read before at once, without a command to Redis', async () => {
      const connection = await run.connection();
      const { store, subscriber } = await cachedReplica(run.keys(), connection);
      const heard = nextMessage(subscriber);
      const written = await store.write('acme', ACTIVE_HARD, T0);
      await heard;
      const reads = jest.spyOn(connection, 'evalsha');

      await expect(store.read('acme')).resolves.toEqual(written);
      const again = store.read('acme');

      expect(again).toEqual(written);
      expect(again).not.toBeInstanceOf(Promise);
      expect(reads).toHaveBeenCalledTimes(1);
    });

    it('never keeps a tenant without a snapshot: each read asks Redis', async () => {
      const connection = await run.connection();
      const { store } = await cachedReplica(run.keys(), connection);
      const reads = jest.spyOn(connection, 'evalsha');

      await expect(store.read('acme')).resolves.toBeNull();
      await expect(store.read('acme')).resolves.toBeNull();

      expect(reads).toHaveBeenCalledTimes(2);
    });

    it("answers the other replica's write from the first read after its message arrives", async () => {
      const keys = run.keys();
      const [oneConnection, otherConnection] = await Promise.all([run.connection(), run.connection()]);
      const one = await cachedReplica(keys, oneConnection);
      const other = await cachedReplica(keys, otherConnection);
      const seeded = nextMessage(one.subscriber);
      await one.store.seed('acme', NOT_CONTAINED, T0);
      await seeded;
      await expect(one.store.read('acme')).resolves.toMatchObject({ state: 'not_contained' });
      expect(one.cache.get('acme')).toBeDefined();
      const arrived = nextMessage(one.subscriber);

      const written = await other.store.write('acme', ACTIVE_HARD, T0 + 1);
      await arrived;

      await expect(one.store.read('acme')).resolves.toEqual(written);
    });

    it('answers its own write from its next read, before its message comes back', async () => {
      const { store } = await cachedReplica(run.keys());
      await store.seed('acme', NOT_CONTAINED, T0);
      await store.read('acme');

      const written = await store.write('acme', ACTIVE_HARD, T0 + 1);

      await expect(store.read('acme')).resolves.toEqual(written);
    });

    it('does not keep a read whose reply arrives after an invalidation', async () => {
      const connection = await run.connection();
      const { store, cache, subscriber } = await cachedReplica(run.keys(), connection);
      const seeded = nextMessage(subscriber);
      await store.seed('acme', NOT_CONTAINED, T0);
      await seeded;
      const reads = jest.spyOn(connection, 'evalsha');

      const reading = store.read('acme');
      // The message of a change arrives while the read is on its way.
      cache.invalidate('acme');
      await reading;
      expect(cache.get('acme')).toBeUndefined();
      await store.read('acme');
      expect(cache.get('acme')).toBeDefined();

      expect(reads).toHaveBeenCalledTimes(2);
    });

    it('reads from Redis once its subscription is cut, so that a change reads at once', async () => {
      const keys = run.keys();
      const [oneConnection, otherConnection] = await Promise.all([run.connection(), run.connection()]);
      const one = await cachedReplica(keys, oneConnection);
      const other = new RedisContainmentStore(otherConnection, keys);
      const seeded = nextMessage(one.subscriber);
      await other.seed('acme', NOT_CONTAINED, T0);
      await seeded;
      await one.store.read('acme');
      expect(one.cache.get('acme')).toBeDefined();
      const off = untilLive(one.cache, false);

      const clients = await run.redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub');
      const id = /id=(\d+) .*name=(\S*)/g;
      const ids = [...String(clients).matchAll(id)].filter((match) => match[2] === one.name).map((match) => match[1]);
      expect(ids).toHaveLength(1);
      await run.redis.call('CLIENT', 'KILL', 'ID', ids[0]);
      await off;
      const written = await other.write('acme', ACTIVE_HARD, T0 + 1);

      await expect(one.store.read('acme')).resolves.toEqual(written);
    });
  });
});
