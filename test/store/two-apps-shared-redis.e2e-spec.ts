import { randomUUID } from 'node:crypto';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { describeRedisServer } from '../support/redis-availability';
import { PrivateRedisCluster, PrivateSentinelGroup } from '../support/redis-topologies';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { json, Upstream } from '../support/upstream';

const ACME = testTenant('acme');
const GLOBEX = testTenant('globex');
const INITECH = testTenant('initech');

/** Where the two replicas keep their shared state. */
const TOPOLOGIES = [
  {
    name: 'a Redis Cluster of 3 primaries',
    async start() {
      const cluster = await PrivateRedisCluster.start({ primaries: 3 });
      return { store: { cluster: { nodes: cluster.urls } }, dispose: () => cluster.dispose() };
    },
  },
  {
    name: 'a primary behind 3 Sentinels',
    async start() {
      const group = await PrivateSentinelGroup.start({ replicas: 1, sentinels: 3 });
      return {
        store: { sentinel: { name: group.name, nodes: group.sentinelUrls } },
        dispose: () => group.dispose(),
      };
    },
  },
];

/**
 * Two replicas of the service on one real Redis Cluster (3 primaries), and on a primary found
 * through Sentinel, decide as one: a budget one of them spent the other refuses, a rate limit
 * counts both, an Idempotency-Key run on one is replayed by the other, and a containment change
 * made through one routes the other's calls. On the cluster each tenant's keys sit on its own
 * slot, wherever the cluster put it.
 */
for (const topology of TOPOLOGIES) {
  describeRedisServer(`two replicas on ${topology.name}`, () => {
    let started: { store: Record<string, unknown>; dispose(): Promise<void> };
    let upstream: Upstream;
    let a: TestApp;
    let b: TestApp;

    beforeAll(async () => {
      started = await topology.start();
      upstream = await Upstream.start(json(200, { ok: true }));
      const prefix = `bh-e2e-two:${randomUUID().slice(0, 8)}:`;
      const config = {
        auth: { adminToken: ADMIN_TOKEN, apiKeys: [ACME.apiKey, GLOBEX.apiKey, INITECH.apiKey] },
        store: { kind: 'redis', ...started.store, prefix, commandTimeoutMs: 2_000 },
        lanes: { main: { concurrency: 8, queueCapacity: 8 } },
        tools: {
          paid: { lane: 'main', kind: 'http', url: upstream.url('/paid'), costUsd: 1, retry: { maxAttempts: 1 } },
        },
        budgets: { tenants: { acme: 3 } },
        rateLimits: { tenants: { globex: { rpm: 2 } } },
      };
      [a, b] = await Promise.all([createTestApp(config), createTestApp(config)]);
    }, 60_000);

    afterAll(async () => {
      await Promise.all([a?.close(), b?.close()]);
      await upstream?.close();
      await started?.dispose();
    }, 60_000);

    const paid = (app: TestApp, headers: Record<string, string>, extra: Record<string, string> = {}) =>
      invoke(app.url, 'paid', { n: 1 }, { ...headers, ...extra });

    it('are ready, each on the shared Redis', async () => {
      for (const app of [a, b]) expect((await send('GET', `${app.url}/health/ready`)).status).toBe(200);
    });

    it('share a budget: what one replica spent, the other does not spend again', async () => {
      const statuses: number[] = [];
      for (const app of [a, b, a, b, a]) statuses.push((await paid(app, ACME.headers)).status);

      expect(statuses).toEqual([200, 200, 200, 402, 402]);
    });

    it('share a rate limit: the calls of both count against one bucket', async () => {
      const statuses: number[] = [];
      for (const app of [a, b, a]) statuses.push((await paid(app, GLOBEX.headers)).status);

      expect(statuses).toEqual([200, 200, 429]);
    });

    it('share an Idempotency-Key: the call run on one is replayed by the other, not run again', async () => {
      const key = { 'idempotency-key': `two-apps-${randomUUID()}` };
      const before = upstream.requests.length;

      const first = await paid(a, INITECH.headers, key);
      const again = await paid(b, INITECH.headers, key);

      expect([first.status, again.status]).toEqual([200, 200]);
      expect(again.body).toMatchObject({ replayed: true });
      expect(upstream.requests.length - before).toBe(1);
    });

    it('share containment: a tenant contained through one replica is refused by the other', async () => {
      const change = await send('PUT', `${a.url}/v1/admin/containment/acme`, {
        json: { state: 'active', posture: 'hard', reason: 'incident' },
        headers: AS_ADMIN,
      });

      expect(change.status).toBe(200);
      await eventually(async () => expect((await paid(b, ACME.headers)).status).toBe(403));
    });
  });
}
