import { randomUUID } from 'node:crypto';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope } from '../support/envelope';
import { eventually } from '../support/eventually';
import { invoke, type Response, send } from '../support/http-client';
import { PrivateRedis, RedisLink } from '../support/private-redis';
import { describeRedisServer } from '../support/redis-availability';
import { parsePromText, sampleValue } from '../support/prom-text';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { Upstream } from '../support/upstream';

/*
 * Redis stopped and started again under a running service (issue 5, "Fault tests"). The Redis
 * is this file's own redis-server on a free port (the shared one on 6379 is never touched),
 * so it can be killed. Time is virtual (FakeClock, scripts on the test clock), except for the
 * one thing that is real: the connection noticing the close and reconnecting. Those waits poll
 * readiness with `eventually`, bounded by RECONNECT_WITHIN_MS.
 */

const acme = testTenant('acme');
const beta = testTenant('beta');

/**
 * The real time the connection may take to come back: ioredis retries at most every 2 s
 * (src/store/redis-connection.ts), and noticing a killed server's closed socket is immediate.
 */
const RECONNECT_WITHIN_MS = 5_000;

const COST_USD = 0.25;
/** Four `charge` calls' worth. */
const ACME_CAP_USD = 1;
/*
 * Few requests per minute on purpose: a bucket's Redis hash expires 1 s after it is full again
 * in virtual time, but Redis counts that TTL in real time; with more than 8 s per token the hash
 * outlives the test by far.
 */
const ACME_RPM = 7;
const BETA_RPM = 3;

type FailMode = 'open' | 'closed';

function config(redisUrl: string, prefix: string, failMode: FailMode, upstream: Upstream) {
  return {
    auth: { adminToken: ADMIN_TOKEN, apiKeys: [acme.apiKey, beta.apiKey] },
    store: { kind: 'redis', url: redisUrl, prefix, commandTimeoutMs: 500 },
    lanes: { work: { concurrency: 4, queueCapacity: 4 } },
    tools: {
      charge: {
        lane: 'work',
        kind: 'http',
        url: upstream.url('/charge'),
        costUsd: COST_USD,
        retry: { maxAttempts: 1 },
      },
      lookup: { lane: 'work', kind: 'http', url: upstream.url('/lookup'), retry: { maxAttempts: 1 } },
    },
    rateLimits: { default: { rpm: ACME_RPM }, tenants: { beta: { rpm: BETA_RPM } }, failMode },
    budgets: { period: 'day', defaultUsd: 10, tenants: { acme: ACME_CAP_USD } },
  };
}

/** `r` of one bucket in the `RateLimit` header: what the tenant has left. */
function remaining(response: Response, bucket = 'rpm'): number {
  const header = String(response.headers.ratelimit);
  const match = new RegExp(`"${bucket}";r=(\\d+)`).exec(header);
  if (!match) throw new Error(`no "${bucket}" in RateLimit: ${header}`);
  return Number(match[1]);
}

function expectSuccess(response: Response, pool: 'normal' | 'isolated') {
  expect({ status: response.status, pool: response.body?.pool }).toEqual({ status: 200, pool });
}

describeRedisServer('Redis stopped and started again under the service', () => {
  let redis: PrivateRedis | undefined;
  let upstream: Upstream | undefined;
  let link: RedisLink | undefined;
  let clock: FakeClock;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    redis = await PrivateRedis.start();
  });

  afterAll(async () => {
    await redis?.dispose();
  });

  beforeEach(async () => {
    clock = new FakeClock();
    upstream = await Upstream.start();
  });

  afterEach(async () => {
    while (apps.length > 0) await closeOnFakeClock(apps.pop(), clock);
    await upstream?.close();
    await link?.close();
    link = undefined;
    // A test that failed during an outage leaves Redis stopped: the next one starts with it up.
    if (redis && !redis.running) await redis.start();
  });

  /** A service on this file's Redis (or `redisUrl`) under a prefix of its own; closed after the test. */
  async function startApp(failMode: FailMode = 'open', redisUrl = redis!.url): Promise<TestApp> {
    const prefix = `bh-e2e-faults:${randomUUID().slice(0, 8)}:`;
    const app = await createTestApp(config(redisUrl, prefix, failMode, upstream!), { clock, redisOnClock: true });
    apps.push(app);
    return app;
  }

  const ready = (app: TestApp) => send('GET', `${app.url}/health/ready`);
  const live = (app: TestApp) => send('GET', `${app.url}/health/live`);

  /** Polls readiness until it answers `status`: the connection's state follows the real socket. */
  const untilReady = (app: TestApp, status: 200 | 503) =>
    eventually(async () => {
      const response = await ready(app);
      expect(response.status).toBe(status);
      return response;
    }, RECONNECT_WITHIN_MS);

  const budgetOf = async (app: TestApp, tenant: string) => {
    const response = await send('GET', `${app.url}/v1/admin/budgets/${tenant}`, { headers: AS_ADMIN });
    expect(response.status).toBe(200);
    return response.body as { capUsd: number; spentUsd: number; reservedUsd: number };
  };

  const metrics = async (app: TestApp) => parsePromText((await send('GET', `${app.url}/metrics`)).body as string);

  /** Stops Redis and waits until the service has noticed (readiness 503). */
  const stopRedis = async (...services: TestApp[]) => {
    await redis!.stop();
    for (const service of services) await untilReady(service, 503);
  };

  /** Starts Redis on the same port and waits until the service has reconnected (readiness 200). */
  const startRedis = async (...services: TestApp[]) => {
    await redis!.start();
    for (const service of services) await untilReady(service, 200);
  };

  it('answers readiness 503 while Redis is stopped and 200 once it is back; liveness stays 200', async () => {
    const app = await startApp();
    expect((await ready(app)).status).toBe(200);

    await redis!.stop();

    const down = await untilReady(app, 503);
    expect(expectEnvelope(down, 503, 'unavailable').message).toMatch(/redis/);
    const stillLive = await live(app);
    expect(stillLive.status).toBe(200);
    expect(stillLive.body).toMatchObject({ status: 'ok' });

    await redis!.start();

    const back = await untilReady(app, 200);
    expect(back.body).toMatchObject({ status: 'ok' });
    expect((await live(app)).status).toBe(200);
  });

  it('refuses budgeted calls and calls with an Idempotency-Key 503 unavailable while Redis is stopped', async () => {
    const app = await startApp('open');
    await stopRedis(app);

    // Sent together: each answers (none waits for Redis to come back), and none reaches the upstream.
    const [charged, keyed, budget] = await Promise.all([
      invoke(app.url, 'charge', {}, acme.headers),
      invoke(app.url, 'lookup', {}, { ...acme.headers, 'idempotency-key': 'k-outage' }),
      send('GET', `${app.url}/v1/admin/budgets/acme`, { headers: AS_ADMIN }),
    ]);

    expect(expectEnvelope(charged, 503, 'unavailable').message).toMatch(/budget/);
    expect(expectEnvelope(keyed, 503, 'unavailable').message).toMatch(/idempotency/);
    expect(budget.status).toBe(503);
    expect(budget.body.error.kind).toBe('unavailable');
    expect(upstream!.requests).toHaveLength(0);
  });

  it('lets a call through the rate limit with failMode open and refuses it 503 unavailable with failMode closed', async () => {
    const open = await startApp('open');
    const closed = await startApp('closed');
    await stopRedis(open, closed);

    const [passed, refused] = await Promise.all([
      invoke(open.url, 'lookup', {}, beta.headers),
      invoke(closed.url, 'lookup', {}, beta.headers),
    ]);

    expectSuccess(passed, 'isolated');
    expect(expectEnvelope(refused, 503, 'unavailable').message).toMatch(/rate limit/);
    expect(upstream!.requests).toHaveLength(1);
    expect(sampleValue(await metrics(open), 'bulkhead_rate_limit_failed_open_total')).toBe(1);
    expect(sampleValue(await metrics(closed), 'bulkhead_rate_limit_failed_open_total')).toBe(0);
  });

  it('routes a configured tenant to the isolated pool with reason store_error while Redis is stopped', async () => {
    const app = await startApp('open');
    expectSuccess(await invoke(app.url, 'lookup', {}, acme.headers), 'normal');
    await stopRedis(app);
    const storeErrors = async () =>
      sampleValue(await metrics(app), 'bulkhead_containment_routes_total', {
        pool: 'isolated',
        reason: 'store_error',
      }) ?? 0;
    const before = await storeErrors();

    const [first, second] = await Promise.all([
      invoke(app.url, 'lookup', {}, acme.headers),
      invoke(app.url, 'lookup', {}, beta.headers),
    ]);

    expectSuccess(first, 'isolated');
    expectSuccess(second, 'isolated');
    expect(await storeErrors()).toBe(before + 2);
    expect(upstream!.requests.map((request) => request.path)).toEqual(['/lookup', '/lookup', '/lookup']);
  });

  it('decides normally again once Redis is back, counting only the calls that succeeded', async () => {
    const open = await startApp('open');
    const closed = await startApp('closed');

    // Before: two charges for acme on the open service, one lookup for beta on the closed one.
    const before1 = await invoke(open.url, 'charge', {}, acme.headers);
    const before2 = await invoke(open.url, 'charge', {}, acme.headers);
    const beforeBeta = await invoke(closed.url, 'lookup', {}, beta.headers);
    expectSuccess(before1, 'normal');
    expectSuccess(before2, 'normal');
    expectSuccess(beforeBeta, 'normal');
    expect([remaining(before1), remaining(before2), remaining(beforeBeta)]).toEqual([
      ACME_RPM - 1,
      ACME_RPM - 2,
      BETA_RPM - 1,
    ]);
    expect(await budgetOf(open, 'acme')).toMatchObject({ spentUsd: 2 * COST_USD, reservedUsd: 0 });

    await stopRedis(open, closed);

    // During: refused or let through without a decision; none of them may be counted later.
    const during = await Promise.all([
      invoke(open.url, 'charge', {}, acme.headers),
      invoke(open.url, 'lookup', {}, { ...acme.headers, 'idempotency-key': 'k-1' }),
      invoke(open.url, 'lookup', {}, acme.headers),
      invoke(closed.url, 'lookup', {}, beta.headers),
    ]);
    expect(during.map((response) => response.status)).toEqual([503, 503, 200, 503]);

    await startRedis(open, closed);

    // After: the buckets and the budget hold exactly what the successful calls with Redis up took.
    const after1 = await invoke(open.url, 'charge', {}, acme.headers);
    expectSuccess(after1, 'normal');
    expect(remaining(after1)).toBe(ACME_RPM - 3);
    const afterBeta = await invoke(closed.url, 'lookup', {}, beta.headers);
    expectSuccess(afterBeta, 'normal');
    expect(remaining(afterBeta)).toBe(BETA_RPM - 2);

    // The key refused during the outage left no record: it runs now, then replays.
    const keyed = await invoke(open.url, 'lookup', {}, { ...acme.headers, 'idempotency-key': 'k-1' });
    expectSuccess(keyed, 'normal');
    expect(keyed.body.replayed).toBe(false);
    const replay = await invoke(open.url, 'lookup', {}, { ...acme.headers, 'idempotency-key': 'k-1' });
    expect({ status: replay.status, replayed: replay.body.replayed }).toEqual({ status: 200, replayed: true });

    // Budget: 3 charges so far; the 4th fills the cap exactly and the 5th is refused.
    expect(await budgetOf(open, 'acme')).toMatchObject({ spentUsd: 3 * COST_USD, reservedUsd: 0 });
    expectSuccess(await invoke(open.url, 'charge', {}, acme.headers), 'normal');
    expectEnvelope(await invoke(open.url, 'charge', {}, acme.headers), 402, 'budget_exceeded');
    expect(await budgetOf(open, 'acme')).toEqual(
      expect.objectContaining({ capUsd: ACME_CAP_USD, spentUsd: ACME_CAP_USD, reservedUsd: 0 }),
    );
    expect(sampleValue(await metrics(open), 'bulkhead_budget_spent_usd_total', { tenant: 'acme' })).toBe(ACME_CAP_USD);

    // Rate limit: acme's 6 admitted calls with Redis up (the replay too) took 6 of 7; the charge
    // the budget refused took nothing, so one more call fits.
    const last = await invoke(open.url, 'lookup', {}, acme.headers);
    expectSuccess(last, 'normal');
    expect(remaining(last)).toBe(0);
    const limited = await invoke(open.url, 'lookup', {}, acme.headers);
    expectEnvelope(limited, 429, 'rate_limited');
    expect(remaining(limited)).toBe(0);

    const paths = upstream!.requests.map((request) => request.path);
    expect(paths.filter((path) => path === '/charge')).toHaveLength(4);
  });

  it('replays nothing on reconnect after a connection cut while Redis keeps its scripts', async () => {
    // A restarted Redis has no scripts, so a replayed EVALSHA would fail NOSCRIPT and hide a
    // replay; a cut link keeps Redis (and its script cache) running (docs/pitfalls.md #8).
    link = await RedisLink.open(redis!);
    const app = await startApp('open', link.url);
    const before = await invoke(app.url, 'charge', {}, acme.headers);
    expectSuccess(before, 'normal');
    expect(remaining(before)).toBe(ACME_RPM - 1);
    // The charge is settled right after its answer: let that land before the link goes.
    await eventually(async () => expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: COST_USD }));

    await link.cut();
    await untilReady(app, 503);
    const during = await Promise.all([
      invoke(app.url, 'charge', {}, acme.headers),
      invoke(app.url, 'lookup', {}, { ...acme.headers, 'idempotency-key': 'k-cut' }),
      invoke(app.url, 'lookup', {}, acme.headers),
    ]);
    expect(during.map((response) => response.status)).toEqual([503, 503, 200]);

    await link.restore();
    await untilReady(app, 200);

    expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: COST_USD, reservedUsd: 0 });
    const after = await invoke(app.url, 'charge', {}, acme.headers);
    expectSuccess(after, 'normal');
    expect(remaining(after)).toBe(ACME_RPM - 2);
    const keyed = await invoke(app.url, 'lookup', {}, { ...acme.headers, 'idempotency-key': 'k-cut' });
    expectSuccess(keyed, 'normal');
    expect(keyed.body.replayed).toBe(false);
  });

  it('starts while Redis is down, answers readiness 503 until Redis is started, then 200', async () => {
    await redis!.stop({ keepData: false });

    // Start-up waits at most 3 s for Redis (src/store/store.module.ts), then goes on without it:
    // the app answers while Redis is still down. The test's own timeout bounds that wait.
    const app = await startApp('open');

    expectEnvelope(await ready(app), 503, 'unavailable');
    expect((await live(app)).status).toBe(200);
    expectSuccess(await invoke(app.url, 'lookup', {}, acme.headers), 'isolated');
    expectEnvelope(await invoke(app.url, 'charge', {}, acme.headers), 503, 'unavailable');

    await startRedis(app);

    // acme's snapshot could not be seeded at start; its first call seeds it.
    const lookup = await invoke(app.url, 'lookup', {}, acme.headers);
    expectSuccess(lookup, 'normal');
    expect(remaining(lookup)).toBe(ACME_RPM - 1);
    expectSuccess(await invoke(app.url, 'charge', {}, acme.headers), 'normal');
    expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: COST_USD, reservedUsd: 0 });
  }, 60_000);
});
