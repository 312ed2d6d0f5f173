import { setTimeout as wait } from 'node:timers/promises';
import Redis, { Cluster } from 'ioredis';
import { describeBudgetStore } from '../../src/budget/budget-store.contract';
import { RedisBudgetStore } from '../../src/budget/redis-budget.store';
import { describeContainmentStore } from '../../src/containment/containment-store.contract';
import { RedisContainmentStore } from '../../src/containment/redis-containment.store';
import { describeCallAdmission } from '../../src/dispatch/admission/call-admission.contract';
import { RedisCallAdmission } from '../../src/dispatch/admission/redis-call-admission';
import { describeIdempotencyStore } from '../../src/idempotency/idempotency-store.contract';
import { RedisIdempotencyStore } from '../../src/idempotency/redis-idempotency.store';
import { describeLlmCacheStore } from '../../src/llm/cache/llm-cache-store.contract';
import { RedisLlmCacheStore } from '../../src/llm/cache/redis-llm-cache.store';
import { describeRateLimitStore } from '../../src/rate-limit/rate-limit-store.contract';
import { RedisRateLimitStore } from '../../src/rate-limit/redis-rate-limit.store';
import type { FakeClock } from '../../src/common/fake-clock';
import { createRedisConnection, readyWithin, type RedisClient, type RedisConnectionOptions } from '../../src/store';
import { RedisKeys, RedisTime } from '../../src/store/redis-keys';
import { silentLogger, uniquePrefix } from '../support/redis';
import { describeRedisServer } from '../support/redis-availability';
import { PrivateRedisCluster, PrivateSentinelGroup } from '../support/redis-topologies';

/** Starting a cluster or a Sentinel group from scratch takes a few seconds. */
const START_MS = 60_000;
/** The LLM cache's TTLs are Redis's own: the contract's time passes for real. */
const EXPIRY_MARGIN_MS = 20;

interface Topology {
  name: string;
  start(): Promise<{ connection: RedisConnectionOptions; dispose(): Promise<void>; where(): Promise<string> }>;
  /** What the connection says of where it is, once ready: it is the topology it claims. */
  seen(redis: RedisClient): string;
}

const TOPOLOGIES: Topology[] = [
  {
    name: 'a Redis Cluster of 3 primaries',
    async start() {
      const cluster = await PrivateRedisCluster.start({ primaries: 3 });
      return {
        connection: { cluster: { nodes: cluster.urls }, commandTimeoutMs: 2_000 },
        dispose: () => cluster.dispose(),
        where: async () => '3 primaries',
      };
    },
    seen: (redis) => (redis instanceof Cluster ? `${redis.nodes('master').length} primaries` : 'not a cluster'),
  },
  {
    name: 'a primary and a replica behind 3 Sentinels',
    async start() {
      const group = await PrivateSentinelGroup.start({ replicas: 1, sentinels: 3 });
      return {
        connection: { sentinel: { name: group.name, nodes: group.sentinelUrls }, commandTimeoutMs: 2_000 },
        dispose: () => group.dispose(),
        where: async () => `the primary on port ${await group.primaryPort()}`,
      };
    },
    seen: (redis) =>
      redis instanceof Cluster ? 'a cluster' : `the primary on port ${(redis as Redis).stream?.remotePort ?? '?'}`,
  },
];

/**
 * Every Redis store's contract, the one the memory and the standalone Redis stores keep, on a
 * real Redis Cluster and on a primary found through Sentinel. On the cluster each script runs on
 * its keys' slot: one whose keys spread over slots would fail with CROSSSLOT, and a contract
 * test with it.
 */
for (const topology of TOPOLOGIES) {
  describeRedisServer(`the shared state on ${topology.name}`, () => {
    let redis: RedisClient;
    let dispose: () => Promise<void> = async () => undefined;
    let where: () => Promise<string>;

    beforeAll(async () => {
      const started = await topology.start();
      dispose = started.dispose;
      where = started.where;
      redis = createRedisConnection({ ...started.connection, logger: silentLogger });
      await readyWithin(redis, 10_000);
      if (redis.status !== 'ready') throw new Error(`no connection to ${topology.name}: ${redis.status}`);
    }, START_MS);

    afterAll(async () => {
      redis?.disconnect();
      await dispose();
    }, START_MS);

    it('is connected where the topology says', async () => {
      expect(topology.seen(redis)).toBe(await where());
    });

    it('runs a script whose keys share a hash tag, and a cluster refuses one whose keys do not (what the tags prevent)', async () => {
      const prefix = uniquePrefix();
      const script = "return redis.call('SET', KEYS[1], 1) and redis.call('SET', KEYS[2], 2)";
      const together = [`${prefix}{acme}:a`, `${prefix}{acme}:b`];
      const apart = [`${prefix}{acme}:a`, `${prefix}{globex}:b`];

      await expect(redis.eval(script, 2, ...together)).resolves.toBe('OK');
      if (redis instanceof Cluster) await expect(redis.eval(script, 2, ...apart)).rejects.toThrow(/CROSSSLOT/);
    });

    const keys = () => new RedisKeys(uniquePrefix());
    const time = (clock?: FakeClock) => new RedisTime(clock);

    describeRateLimitStore(topology.name, (clock) => new RedisRateLimitStore(redis, keys(), time(clock)));
    describeBudgetStore(topology.name, (clock) => new RedisBudgetStore(redis, keys(), time(clock)));
    describeIdempotencyStore(
      topology.name,
      (clock, bounds) => new RedisIdempotencyStore(redis, keys(), time(clock), bounds),
      { evictsByCount: false, boundsBytesInAll: false },
    );
    describeContainmentStore(topology.name, () => new RedisContainmentStore(redis, keys()));
    describeCallAdmission(topology.name, (clock) => {
      const shared = keys();
      const rates = new RedisRateLimitStore(redis, shared, time(clock));
      const budgets = new RedisBudgetStore(redis, shared, time(clock));
      return { rates, budgets, joint: new RedisCallAdmission(redis, rates, budgets) };
    });
    describeLlmCacheStore(topology.name, () => new RedisLlmCacheStore(redis, keys()), {
      passTime: (_clock, ms) => wait(ms + EXPIRY_MARGIN_MS),
    });
  });
}
