import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { seededRandom } from '../../src/common';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope } from '../support/envelope';
import { eventually } from '../support/eventually';
import { invoke, type Response, send } from '../support/http-client';
import { closeRedis, connectRedis, deleteKeysUnder, SHARED_REDIS_URL } from '../support/redis';
import { itRedis } from '../support/redis-availability';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { json, Upstream, type UpstreamHandler } from '../support/upstream';
import { WhoGate } from '../support/who-gate';

/** The wall clock starts at 21:30 UTC on 14 March 2026: the day ends 2.5 h later. */
const WALL_START = Date.UTC(2026, 2, 14, 21, 30);
const UNTIL_MIDNIGHT_MS = Date.UTC(2026, 2, 15) - WALL_START;
/** The paid tools' attempt timeout: the longest a refusal caused by calls in flight asks to wait. */
const TIMEOUT_MS = 5_000;

const ACME = testTenant('acme');

const statuses = (responses: Response[]) => responses.map((response) => response.status);

/**
 * Issue 15: a budgeted tool call holds one attempt's cost at a time, as the attempt starts,
 * not `costUsd × maxAttempts` up front; a 402 that only money held by calls in flight causes
 * asks to come back after one attempt, not at the end of the day.
 */
describe('budgets hold one attempt at a time (issue 15)', () => {
  let clock: FakeClock;
  const apps: TestApp[] = [];
  const upstreams: Upstream[] = [];
  const gates: WhoGate[] = [];
  const prefixes: string[] = [];
  let redis: Redis | undefined;

  beforeEach(() => {
    clock = new FakeClock(WALL_START);
  });

  afterEach(async () => {
    for (const gate of gates.splice(0)) gate.releaseAll();
    for (const upstream of upstreams.splice(0)) await upstream.close();
    for (const app of apps.splice(0)) await closeOnFakeClock(app, clock);
    for (const prefix of prefixes.splice(0)) {
      redis ??= await connectRedis();
      await deleteKeysUnder(redis, prefix);
    }
  });

  afterAll(async () => {
    await closeRedis(redis);
  });

  function redisStore(): Record<string, unknown> {
    const prefix = `bh-e2e:${randomUUID()}:`;
    prefixes.push(prefix);
    return { kind: 'redis', url: SHARED_REDIS_URL, prefix, commandTimeoutMs: 2_000 };
  }

  async function upstream(handler: UpstreamHandler): Promise<Upstream> {
    const started = await Upstream.start(handler);
    upstreams.push(started);
    return started;
  }

  /** An upstream that holds every request until the test releases them. */
  async function heldUpstream(): Promise<{ gate: WhoGate; up: Upstream }> {
    const gate = new WhoGate();
    gates.push(gate);
    return { gate, up: await upstream(gate.handler) };
  }

  /** The app with tenant acme, a lane `main` that admits 16 at once and queues none, and `document`. */
  async function service(document: Record<string, unknown>, store?: Record<string, unknown>): Promise<TestApp> {
    const app = await createTestApp(
      {
        auth: { adminToken: ADMIN_TOKEN, apiKeys: [ACME.apiKey] },
        lanes: { main: { concurrency: 16, queueCapacity: 0 } },
        ...document,
        ...(store ? { store } : {}),
      },
      { clock, random: seededRandom(15), redisOnClock: store?.kind === 'redis' },
    );
    apps.push(app);
    return app;
  }

  /** An http tool on `url` costing 1 USD per attempt, with the default 3 attempts unless `retry` says otherwise. */
  function paidTool(url: string, retry: Record<string, unknown> = {}) {
    return {
      lane: 'main',
      kind: 'http',
      url,
      timeoutMs: TIMEOUT_MS,
      costUsd: 1,
      retry: { baseDelayMs: 100, maxDelayMs: 100, budget: { minRetries: 1000 }, ...retry },
      breaker: { volumeThreshold: 100_000, rollingCountTimeoutMs: 3_600_000 },
    };
  }

  async function budgetOf(app: TestApp): Promise<Record<string, unknown>> {
    const response = await send('GET', `${app.url}/v1/admin/budgets/acme`, { headers: AS_ADMIN });
    expect(response.status).toBe(200);
    return response.body as Record<string, unknown>;
  }

  /** A 402 that only money held by calls in flight caused: come back after one attempt's timeout. */
  function expectHeldByCallsInFlight(response: Response): void {
    const error = expectEnvelope(response, 402, 'budget_exceeded');
    expect({ attempts: error.attempts, retryAfterMs: error.retryAfterMs }).toEqual({
      attempts: 0,
      retryAfterMs: TIMEOUT_MS,
    });
    expect(response.headers['retry-after']).toBe(String(TIMEOUT_MS / 1000));
  }

  /** A 402 of a spent budget: come back when the day ends, `elapsedMs` after the tests' start. */
  function expectSpentUntilMidnight(response: Response, elapsedMs = 0): void {
    const error = expectEnvelope(response, 402, 'budget_exceeded');
    expect(error.retryAfterMs).toBe(UNTIL_MIDNIGHT_MS - elapsedMs);
  }

  /**
   * Sends 10 calls of `paid` at once, spread over `targets`, while the upstream holds every
   * request: all have held their first attempt (or been refused) before any settles. Then lets
   * them finish.
   */
  async function burst(targets: TestApp[], gate: WhoGate): Promise<Response[]> {
    const answers: Array<Response | undefined> = new Array(10).fill(undefined);
    const calls = Array.from({ length: 10 }, (_, index) =>
      invoke(targets[index % targets.length].url, 'paid', { who: `call-${index}` }, ACME.headers).then(
        (answer) => (answers[index] = answer),
      ),
    );
    await eventually(() => expect(gate.heldCount + answers.filter(Boolean).length).toBe(10));
    expect(gate.heldCount).toBe(3);
    for (const refused of answers.filter((answer) => answer !== undefined)) expectHeldByCallsInFlight(refused);
    gate.releaseAll();
    return Promise.all(calls);
  }

  it('answers 3 of 10 concurrent calls of a 3-attempt tool under a cap of 3 calls, refusing 7 for one attempt’s time (memory store)', async () => {
    const { gate, up } = await heldUpstream();
    const app = await service({ tools: { paid: paidTool(up.url('/paid')) }, budgets: { tenants: { acme: 3 } } });

    const answers = await burst([app], gate);

    expect(statuses(answers).sort()).toEqual([...Array(3).fill(200), ...Array(7).fill(402)]);
    expect(up.requests).toHaveLength(3);
    expect(await budgetOf(app)).toMatchObject({ capUsd: 3, spentUsd: 3, reservedUsd: 0 });
    // Now the day is spent, not held: the next refusal runs until midnight.
    expectSpentUntilMidnight(await invoke(app.url, 'paid', { who: 'late' }, ACME.headers));
  });

  itRedis(
    'answers 3 of 10 concurrent calls of a 3-attempt tool under a cap of 3 calls across two apps sharing Redis',
    async () => {
      const { gate, up } = await heldUpstream();
      const store = redisStore();
      const document = { tools: { paid: paidTool(up.url('/paid')) }, budgets: { tenants: { acme: 3 } } };
      const first = await service(document, store);
      const second = await service(document, store);

      const answers = await burst([first, second], gate);

      expect(statuses(answers).sort()).toEqual([...Array(3).fill(200), ...Array(7).fill(402)]);
      expect(up.requests).toHaveLength(3);
      for (const app of [first, second]) {
        expect(await budgetOf(app)).toMatchObject({ capUsd: 3, spentUsd: 3, reservedUsd: 0 });
      }
      expectSpentUntilMidnight(await invoke(second.url, 'paid', { who: 'late' }, ACME.headers));
    },
  );

  it('ends a call with its last error, not 402, when its retry cannot be held, and never overspends', async () => {
    const { gate, up: held } = await heldUpstream();
    const flaky = await upstream(json(503, { error: 'busy' }));
    const app = await service({
      tools: { paid: paidTool(held.url('/paid'), { maxAttempts: 1 }), flaky: paidTool(flaky.url('/flaky')) },
      budgets: { tenants: { acme: 3 } },
    });
    const calls = ['b', 'c'].map((who) => invoke(app.url, 'paid', { who }, ACME.headers));
    await eventually(() => expect(gate.heldCount).toBe(2));
    const failures = async () => (await send('GET', `${app.url}/v1/circuits`)).body.circuits.flaky.failures as number;

    // Its first attempt takes the last dollar; once it failed, the two calls in flight hold two of the three left.
    const flakyCall = invoke(app.url, 'flaky', {}, ACME.headers);
    await eventually(async () => expect(await failures()).toBe(1));
    await clock.advanceAsync(100);
    const answer = await flakyCall;

    const error = expectEnvelope(answer, 502, 'transient');
    expect(error.attempts).toBe(1);
    expect(flaky.requests).toHaveLength(1);
    expect(await budgetOf(app)).toMatchObject({ spentUsd: 1, reservedUsd: 2 });
    gate.releaseAll();
    expect(statuses(await Promise.all(calls))).toEqual([200, 200]);
    expect(await budgetOf(app)).toMatchObject({ capUsd: 3, spentUsd: 3, reservedUsd: 0 });
  });

  it('retries as long as each retry can be held, charging each attempt as it ends', async () => {
    const flaky = await upstream(json(503, { error: 'busy' }));
    const app = await service({ tools: { flaky: paidTool(flaky.url('/flaky')) }, budgets: { tenants: { acme: 2 } } });
    const failures = async () => (await send('GET', `${app.url}/v1/circuits`)).body.circuits.flaky.failures as number;

    // Three attempts allowed, two dollars: the call's first two attempts run, the third is not made.
    const call = invoke(app.url, 'flaky', {}, ACME.headers);
    await eventually(async () => expect(await failures()).toBe(1));
    expect(await budgetOf(app)).toMatchObject({ spentUsd: 1, reservedUsd: 0 });
    await clock.advanceAsync(100);
    await eventually(async () => expect(await failures()).toBe(2));
    await clock.advanceAsync(100);
    const answer = await call;

    expect(expectEnvelope(answer, 502, 'transient').attempts).toBe(2);
    expect(flaky.requests).toHaveLength(2);
    expect(await budgetOf(app)).toMatchObject({ capUsd: 2, spentUsd: 2, reservedUsd: 0 });
    expectSpentUntilMidnight(await invoke(app.url, 'flaky', {}, ACME.headers), 200);
  });
});
