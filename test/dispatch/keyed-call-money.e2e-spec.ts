import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { seededRandom } from '../../src/common';
import { FakeClock } from '../../src/common/fake-clock';
import { argumentsFingerprint, IdempotencyStore, scopedIdempotencyKey } from '../../src/idempotency';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope } from '../support/envelope';
import { invoke, type Response, send } from '../support/http-client';
import { closeRedis, connectRedis, deleteKeysUnder, SHARED_REDIS_URL } from '../support/redis';
import { itRedis } from '../support/redis-availability';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { json, Upstream } from '../support/upstream';

const ACME = testTenant('acme');
const KEY = 'order-K1';
const ARGS = { order: 'K1' };
/** The tool's attempt timeout: with the lane's 1 s queue wait and 5 s more, its first attempt's hold lasts 11 s. */
const TIMEOUT_MS = 5_000;
/** The lease another replica's claim of the key had when that replica died: longer than the hold. */
const OTHER_LEASE_MS = 26_000;

/**
 * Issue 36, item 1: a keyed call that waits on another replica's run of its key for longer than
 * its own first attempt's hold lasts, and then runs the key itself (the other replica died, its
 * lease lapsed), is charged; the cap admits no run past it. Every paid run is charged, whoever
 * waits how long.
 */
describe('a keyed tool call that waited on another replica’s claim (issue 36)', () => {
  let clock: FakeClock;
  let up: Upstream;
  let app: TestApp | undefined;
  let redis: Redis | undefined;
  const prefixes: string[] = [];

  beforeEach(async () => {
    clock = new FakeClock();
    up = await Upstream.start(json(200, { paid: true }));
  });

  afterEach(async () => {
    await up.close();
    await closeOnFakeClock(app, clock);
    app = undefined;
    for (const prefix of prefixes.splice(0)) {
      redis ??= await connectRedis();
      await deleteKeysUnder(redis, prefix);
    }
  });

  afterAll(async () => {
    await closeRedis(redis);
  });

  async function service(store?: Record<string, unknown>): Promise<TestApp> {
    app = await createTestApp(
      {
        auth: { adminToken: ADMIN_TOKEN, apiKeys: [ACME.apiKey] },
        lanes: { main: { concurrency: 4, queueCapacity: 4, queueTtlMs: 1_000 } },
        tools: {
          paid: {
            lane: 'main',
            kind: 'http',
            url: up.url('/paid'),
            timeoutMs: TIMEOUT_MS,
            costUsd: 1,
            retry: { maxAttempts: 1 },
          },
        },
        budgets: { tenants: { acme: 2 } },
        ...(store ? { store } : {}),
      },
      { clock, random: seededRandom(36), redisOnClock: store !== undefined },
    );
    return app;
  }

  function redisStore(): Record<string, unknown> {
    const prefix = `bh-e2e:${randomUUID()}:`;
    prefixes.push(prefix);
    return { kind: 'redis', url: SHARED_REDIS_URL, prefix, commandTimeoutMs: 2_000 };
  }

  async function budget(): Promise<Record<string, unknown>> {
    return (await send('GET', `${app!.url}/v1/admin/budgets/acme`, { headers: AS_ADMIN })).body as Record<
      string,
      unknown
    >;
  }

  /**
   * Replica A claims the key in the shared store and dies; replica B (the app) gets the client's
   * retry, waits on A's claim until its lease lapses, then runs the key. Virtual time moves in
   * 100 ms steps, each letting B's poll reach the store, until B's run reaches the upstream.
   */
  async function retryAfterTheOtherDied(): Promise<Response> {
    const store = app!.app.get<IdempotencyStore>(IdempotencyStore);
    const scoped = scopedIdempotencyKey(ACME.tenant, 'paid', KEY);
    await expect(store.claim(scoped, argumentsFingerprint(ARGS), OTHER_LEASE_MS, ACME.tenant)).resolves.toMatchObject({
      status: 'claimed',
    });
    const retry = invoke(app!.url, 'paid', ARGS, { ...ACME.headers, 'idempotency-key': KEY });
    for (let waitedMs = 0; up.requests.length === 0 && waitedMs < 2 * OTHER_LEASE_MS; waitedMs += 100) {
      await clock.advanceAsync(100);
      // Lets a Redis round trip of the poll come back before time moves on.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(clock.now()).toBeGreaterThanOrEqual(OTHER_LEASE_MS);
    return retry;
  }

  async function expectChargedAndCapped(): Promise<void> {
    const answer = await retryAfterTheOtherDied();
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ replayed: false, attempts: 1 });
    expect(await budget()).toMatchObject({ capUsd: 2, spentUsd: 1, reservedUsd: 0 });
    // One more paid run fits under the $2 cap, and none after it.
    expect((await invoke(app!.url, 'paid', { order: 'K2' }, ACME.headers)).status).toBe(200);
    expectEnvelope(await invoke(app!.url, 'paid', { order: 'K3' }, ACME.headers), 402, 'budget_exceeded');
    expect(up.requests).toHaveLength(2);
    expect(await budget()).toMatchObject({ spentUsd: 2, reservedUsd: 0 });
  }

  it('is charged when it runs after waiting longer than its hold lasts, and the cap holds (memory store)', async () => {
    await service();
    await expectChargedAndCapped();
  });

  itRedis(
    'is charged when it runs after waiting longer than its hold lasts, and the cap holds (Redis store)',
    async () => {
      await service(redisStore());
      await expectChargedAndCapped();
    },
  );

  it('holds nothing while it waits on another replica’s claim', async () => {
    await service();
    const store = app!.app.get<IdempotencyStore>(IdempotencyStore);
    const scoped = scopedIdempotencyKey(ACME.tenant, 'paid', KEY);
    await store.claim(scoped, argumentsFingerprint(ARGS), OTHER_LEASE_MS, ACME.tenant);
    const retry = invoke(app!.url, 'paid', ARGS, { ...ACME.headers, 'idempotency-key': KEY });
    await clock.advanceAsync(1_000);
    expect(await budget()).toMatchObject({ spentUsd: 0, reservedUsd: 0 });
    // Its budget refused once it became the lead: the key is free again, nothing ran.
    for (const order of ['X1', 'X2'])
      expect((await invoke(app!.url, 'paid', { order }, ACME.headers)).status).toBe(200);
    for (let waitedMs = 0; waitedMs < OTHER_LEASE_MS; waitedMs += 100) {
      await clock.advanceAsync(100);
    }
    expectEnvelope(await retry, 402, 'budget_exceeded');
    await expect(store.claim(scoped, argumentsFingerprint(ARGS), 1_000, ACME.tenant)).resolves.toMatchObject({
      status: 'claimed',
    });
  });
});
