import { randomUUID } from 'node:crypto';
import { type ContainmentCache, ContainmentStore } from '../../src/containment';
import { RedisContainmentStore } from '../../src/containment/redis-containment.store';
import { createRedisConnection, readyWithin, type RedisClient } from '../../src/store';
import { RedisKeys } from '../../src/store/redis-keys';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke } from '../support/http-client';
import { silentLogger } from '../support/redis';
import { describeRedisServer } from '../support/redis-availability';
import { PrivateRedisCluster, redisCli } from '../support/redis-topologies';
import { testTenant } from '../support/tenants';

const acme = testTenant('acme');
const HARD = { state: 'active', posture: 'hard', reason: 'incident' } as const;

/*
 * A replica on a Redis Cluster (issue 26): its containment cache is kept fresh by a classic
 * PUBLISH, which every node of a cluster hears, over a subscriber connection to one node at a
 * time (ClusterNodeSubscriber). Changes are written by a second store on the same cluster, as
 * another replica would; the replica under test is the only subscriber, so the node it listens on
 * can be found and killed. Real time throughout: the subscription and its PING checks are.
 */
describeRedisServer('containment cache: a replica on a Redis Cluster', () => {
  let cluster: PrivateRedisCluster;
  let writer: RedisClient;
  let app: TestApp | undefined;
  let prefix: string;

  beforeAll(async () => {
    cluster = await PrivateRedisCluster.start({ primaries: 3, replicas: 1 });
    writer = createRedisConnection({ cluster: { nodes: cluster.urls }, commandTimeoutMs: 2_000, logger: silentLogger });
    await readyWithin(writer, 10_000);
  }, 60_000);

  afterAll(async () => {
    writer?.disconnect();
    await cluster?.dispose();
  }, 60_000);

  beforeEach(async () => {
    prefix = `bh-e2e-cluster:${randomUUID().slice(0, 8)}:`;
    app = await createTestApp({
      auth: { apiKeys: [acme.apiKey] },
      store: { kind: 'redis', cluster: { nodes: cluster.urls }, prefix, commandTimeoutMs: 2_000 },
      lanes: { main: { concurrency: 8, queueCapacity: 8 } },
      tools: { read: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
    });
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const channel = () => `${prefix}containment`;
  const cacheOf = (replica: TestApp) => replica.app.get<{ cache?: ContainmentCache }>(ContainmentStore).cache!;
  const call = () => invoke(app!.url, 'read', { n: 1 }, acme.headers);
  const change = (snapshot: typeof HARD) =>
    new RedisContainmentStore(writer, new RedisKeys(prefix)).write('acme', snapshot, Date.now());

  /** The running nodes' ports where the replica's subscription is (PUBSUB is per node on a cluster). */
  async function listeningNodes(): Promise<number[]> {
    const ports: number[] = [];
    for (const node of cluster.nodes.filter((each) => each.running)) {
      const numsub = await redisCli(node.port, 'pubsub', 'numsub', channel());
      if (Number(numsub.trim().split('\n')[1]) > 0) ports.push(node.port);
    }
    return ports;
  }

  const isPrimary = async (port: number) => (await redisCli(port, 'role')).startsWith('master');

  /** Calls until the replica holds acme's snapshot in its live cache. */
  async function warm(): Promise<void> {
    await eventually(async () => {
      expect((await call()).status).toBe(200);
      expect(cacheOf(app!).get('acme')).toBeDefined();
    });
  }

  it('hears a change written by another replica on any node, and routes the next call by it', async () => {
    await warm();

    await change(HARD);
    await eventually(() => expect(cacheOf(app!).get('acme')).toBeUndefined());

    expect((await call()).status).toBe(403);
  });

  it("follows the tenant's slot to another primary: reads go on, the cache stays live, changes are heard", async () => {
    await warm();
    const slotKey = `${prefix}{acme}:containment`;
    const owner = await cluster.primaryOf(slotKey);
    const primaries = await Promise.all(cluster.nodes.map(async (node) => [node, await isPrimary(node.port)] as const));
    const other = primaries.find(([node, primary]) => primary && node !== owner)![0];

    await cluster.moveSlotOf(slotKey, other);

    expect(cacheOf(app!).live).toBe(true);
    expect((await call()).status).toBe(200);
    await change(HARD);
    await eventually(() => expect(cacheOf(app!).get('acme')).toBeUndefined());
    expect((await call()).status).toBe(403);
  }, 120_000);

  it('reads the snapshots its decisions rest on from primaries, whatever scaleReads says', async () => {
    await app!.close();
    app = await createTestApp({
      auth: { apiKeys: [acme.apiKey] },
      store: {
        kind: 'redis',
        cluster: { nodes: cluster.urls, scaleReads: 'slave' },
        prefix,
        commandTimeoutMs: 2_000,
      },
      lanes: { main: { concurrency: 8, queueCapacity: 8 } },
      tools: { read: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
    });
    const replicas = [];
    for (const node of cluster.nodes) if (!(await isPrimary(node.port))) replicas.push(node);
    expect(replicas).toHaveLength(3);
    for (const node of replicas) await redisCli(node.port, 'config', 'resetstat');

    await warm();
    await eventually(() => change(HARD));
    await eventually(() => expect(cacheOf(app!).get('acme')).toBeUndefined());
    expect((await call()).status).toBe(403);

    // A replica's copy may lag the operator's change: no read a decision rests on went to one.
    for (const node of replicas) {
      const stats = await redisCli(node.port, 'info', 'commandstats');
      expect(stats).not.toMatch(/cmdstat_(hmget|hgetall|evalsha|eval):/);
    }
  }, 120_000);

  it('stops listening, on every node, when the app closes', async () => {
    await eventually(async () => expect(await listeningNodes()).toHaveLength(1));

    await app!.close();
    app = undefined;

    await eventually(async () => expect(await listeningNodes()).toEqual([]));
  });

  it('listens on one node; when that node dies it reads from Redis, then listens on another and hears changes again', async () => {
    await warm();
    const [listening, ...others] = await eventually(async () => {
      const ports = await listeningNodes();
      expect(ports).toHaveLength(1);
      return ports;
    });
    expect(others).toEqual([]);
    const node = cluster.nodes.find((each) => each.port === listening)!;

    await node.stop({ keepData: false });
    // Fail closed: from the close on, nothing is answered from the cache.
    await eventually(() => expect(cacheOf(app!).live).toBe(false));
    await cluster.untilHealthy();
    await eventually(async () => {
      expect(cacheOf(app!).live).toBe(true);
      expect(await listeningNodes()).toHaveLength(1);
    });
    await warm();
    await eventually(() => change(HARD));
    await eventually(() => expect(cacheOf(app!).get('acme')).toBeUndefined());

    expect((await call()).status).toBe(403);
    await node.start();
  }, 60_000);
});
