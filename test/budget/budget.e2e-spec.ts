import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type Redis from 'ioredis';
import { seededRandom } from '../../src/common';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope } from '../support/envelope';
import { eventually } from '../support/eventually';
import { invoke, type Response, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { closeRedis, connectRedis, deleteKeysUnder, SHARED_REDIS_URL } from '../support/redis';
import { describeRedis, itRedis } from '../support/redis-availability';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { json, Upstream, type UpstreamHandler } from '../support/upstream';
import { WhoGate } from '../support/who-gate';

const REDIS_URL = SHARED_REDIS_URL;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The tests' wall clock starts at 21:30 UTC on 14 March 2026: the day ends 2.5 h later. */
const WALL_START = Date.UTC(2026, 2, 14, 21, 30);
const MIDNIGHT = Date.UTC(2026, 2, 15);
const UNTIL_MIDNIGHT_MS = MIDNIGHT - WALL_START;
const PERIOD = 'day:2026-03-14';
const NEXT_PERIOD = 'day:2026-03-15';

const ACME = testTenant('acme');
const GLOBEX = testTenant('globex');

/** A tenant's budget as `GET /v1/admin/budgets/{tenant}` shows it. */
interface BudgetView {
  capUsd: number | null;
  spentUsd: number;
  reservedUsd: number;
  period: string;
  resetsAt: string;
}

function status(code: number): UpstreamHandler {
  return (_request, response: ServerResponse) => {
    response.writeHead(code).end();
  };
}

/** Answers its requests with `script` in turn, the last handler for ever after. */
function inTurn(...script: UpstreamHandler[]): UpstreamHandler {
  let next = 0;
  return (request, response) => script[Math.min(next++, script.length - 1)](request, response);
}

const statuses = (responses: Response[]) => responses.map((response) => response.status);

describe('USD budgets over HTTP', () => {
  let clock: FakeClock;
  const apps: TestApp[] = [];
  const upstreams: Upstream[] = [];
  const gates: WhoGate[] = [];
  const prefixes: string[] = [];
  /** Connected by the first test that wrote to Redis: a memory-store test never needs one. */
  let redis: Redis | undefined;

  afterAll(async () => {
    await closeRedis(redis);
  });

  beforeEach(() => {
    clock = new FakeClock(WALL_START);
  });

  afterEach(async () => {
    // Held upstream requests first: a failed test may have left calls waiting on them.
    for (const gate of gates.splice(0)) gate.releaseAll();
    for (const upstream of upstreams.splice(0)) await upstream.close();
    for (const app of apps.splice(0)) await closeOnFakeClock(app, clock);
    for (const prefix of prefixes.splice(0)) {
      redis ??= await connectRedis();
      await deleteKeysUnder(redis, prefix);
    }
  });

  /** A unique key prefix on the shared Redis, deleted after the test. */
  function redisStore(): Record<string, unknown> {
    const prefix = `bh-e2e:${randomUUID()}:`;
    prefixes.push(prefix);
    return { kind: 'redis', url: REDIS_URL, prefix, commandTimeoutMs: 2_000 };
  }

  async function upstream(handler: UpstreamHandler = json(200, { ok: true })): Promise<Upstream> {
    const started = await Upstream.start(handler);
    upstreams.push(started);
    return started;
  }

  async function heldUpstream(): Promise<{ gate: WhoGate; up: Upstream }> {
    const gate = new WhoGate();
    gates.push(gate);
    return { gate, up: await upstream(gate.handler) };
  }

  /**
   * The app with tenants acme and globex (API keys), the admin token, a lane `main` that
   * admits 16 at once and queues none, and `document` on top (its tools, budgets, store).
   */
  async function service(document: Record<string, unknown>, store?: Record<string, unknown>): Promise<TestApp> {
    const app = await createTestApp(
      {
        auth: { adminToken: ADMIN_TOKEN, apiKeys: [ACME.apiKey, GLOBEX.apiKey] },
        lanes: { main: { concurrency: 16, queueCapacity: 0 } },
        ...document,
        ...(store ? { store } : {}),
      },
      { clock, random: seededRandom(5), redisOnClock: store?.kind === 'redis' },
    );
    apps.push(app);
    return app;
  }

  /** A builtin echo tool on lane `main`, one attempt per call, costing `costUsd` (nothing when left out). */
  function echoTool(costUsd?: number) {
    const tool = { lane: 'main', kind: 'builtin', builtin: 'echo', retry: { maxAttempts: 1 } };
    return costUsd === undefined ? tool : { ...tool, costUsd };
  }

  /** An http tool on `url`, costing 1 USD per attempt, one attempt per call unless `retry` says more. */
  function httpTool(url: string, retry: Record<string, unknown> = { maxAttempts: 1 }) {
    return {
      lane: 'main',
      kind: 'http',
      url,
      timeoutMs: 5_000,
      costUsd: 1,
      retry: { baseDelayMs: 100, maxDelayMs: 100, budget: { minRetries: 1000 }, ...retry },
      breaker: { volumeThreshold: 100_000, rollingCountTimeoutMs: 3_600_000 },
    };
  }

  async function budgetOf(app: TestApp, tenant: string): Promise<BudgetView> {
    const response = await send('GET', `${app.url}/v1/admin/budgets/${tenant}`, { headers: AS_ADMIN });
    expect({ status: response.status, body: response.body as unknown }).toEqual({
      status: 200,
      body: expect.anything(),
    });
    return response.body as BudgetView;
  }

  /** Makes `count` calls one after another; answers their responses in order. */
  async function callsInTurn(app: TestApp, toolId: string, count: number, headers: Record<string, string> = {}) {
    const answers: Response[] = [];
    for (let index = 0; index < count; index++) answers.push(await invoke(app.url, toolId, { n: index }, headers));
    return answers;
  }

  async function spentMetric(app: TestApp, tenant: string): Promise<number | undefined> {
    const prom = parsePromText((await send('GET', `${app.url}/metrics`)).body as string);
    return sampleValue(prom, 'bulkhead_budget_spent_usd_total', { tenant });
  }

  /** Expects a 402 budget_exceeded whose Retry-After (`untilResetMs`) runs until the period resets. */
  function expectBudgetExceeded(response: Response, untilResetMs: number): void {
    const error = expectEnvelope(response, 402, 'budget_exceeded');
    expect(error.jsonrpcCode).toBe(-32003);
    expect(error.attempts).toBe(0);
    expect(error.retryAfterMs).toBe(untilResetMs);
    expect(response.headers['retry-after']).toBe(String(Math.ceil(untilResetMs / 1000)));
  }

  // First: ioredis keeps a closed connection's 2 s disconnect timer, which later tests outlast.
  describe('with the store down', () => {
    it('answers 503 unavailable for a paid call and the admin view at once, and still serves free tools', async () => {
      // A long command timeout: a command queued while Redis is down would hang past the test.
      const app = await service(
        { tools: { paid: echoTool(1), free: echoTool() }, budgets: { tenants: { acme: 10 } } },
        { kind: 'redis', url: 'redis://127.0.0.1:1', commandTimeoutMs: 60_000 },
      );

      const startedAt = performance.now();
      const paid = await invoke(app.url, 'paid', {}, ACME.headers);
      const free = await invoke(app.url, 'free', { hello: 'world' }, ACME.headers);
      const view = await send('GET', `${app.url}/v1/admin/budgets/acme`, { headers: AS_ADMIN });
      const elapsedMs = performance.now() - startedAt;

      expectEnvelope(paid, 503, 'unavailable');
      expect({ status: free.status, result: free.body.result }).toEqual({ status: 200, result: { hello: 'world' } });
      expectEnvelope(view, 503, 'unavailable');
      // Decisions fail at once instead of waiting for Redis (a generous bound, not a timing claim:
      // half the 60 s command timeout a wait would take, so a loaded machine's stall is not a failure).
      expect(elapsedMs).toBeLessThan(30_000);
    });
  });

  /** The tests of a cap of three calls, on the store `store()` configures. */
  function threeCallCapTests(store: () => Record<string, unknown>): void {
    async function threeCallCap() {
      const up = await upstream();
      const app = await service(
        { tools: { paid: httpTool(up.url('/paid')) }, budgets: { tenants: { acme: 3 } } },
        store(),
      );
      return { app, up };
    }

    it('answers calls 1-3 and refuses the 4th 402 budget_exceeded until the UTC day ends', async () => {
      const { app, up } = await threeCallCap();

      const answers = await callsInTurn(app, 'paid', 4, ACME.headers);

      expect(statuses(answers)).toEqual([200, 200, 200, 402]);
      expectBudgetExceeded(answers[3], UNTIL_MIDNIGHT_MS);
      expect(up.requests).toHaveLength(3);
      expect(await budgetOf(app, 'acme')).toEqual({
        capUsd: 3,
        spentUsd: 3,
        reservedUsd: 0,
        period: PERIOD,
        resetsAt: new Date(MIDNIGHT).toISOString(),
      });
    });

    it('starts a fresh budget past UTC midnight, exactly when Retry-After said', async () => {
      const { app, up } = await threeCallCap();
      await callsInTurn(app, 'paid', 3, ACME.headers);
      const refused = await invoke(app.url, 'paid', {}, ACME.headers);
      expectBudgetExceeded(refused, UNTIL_MIDNIGHT_MS);

      await clock.advanceAsync(refused.body.error.retryAfterMs - 1);
      // One millisecond before midnight the day is still spent.
      expectBudgetExceeded(await invoke(app.url, 'paid', {}, ACME.headers), 1);
      await clock.advanceAsync(1);

      expect(await budgetOf(app, 'acme')).toEqual({
        capUsd: 3,
        spentUsd: 0,
        reservedUsd: 0,
        period: NEXT_PERIOD,
        resetsAt: new Date(MIDNIGHT + DAY_MS).toISOString(),
      });
      const answers = await callsInTurn(app, 'paid', 4, ACME.headers);
      expect(statuses(answers)).toEqual([200, 200, 200, 402]);
      expectBudgetExceeded(answers[3], DAY_MS);
      expect(up.requests).toHaveLength(6);
      expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: 3, reservedUsd: 0, period: NEXT_PERIOD });
    });
  }

  describe('a cap of three calls (memory store)', () => threeCallCapTests(() => ({ kind: 'memory' })));
  describeRedis('a cap of three calls (redis store)', () => threeCallCapTests(redisStore));

  describe('a burst of 10 concurrent calls against a budget of 3 calls', () => {
    /**
     * Sends 10 calls at once, spread over `targets`, while the upstream holds every request:
     * all of them have reserved (or been refused) before any settles. Then lets them finish.
     */
    async function burst(targets: TestApp[], gate: WhoGate): Promise<Response[]> {
      const answers: Array<Response | undefined> = new Array(10).fill(undefined);
      const calls = Array.from({ length: 10 }, (_, index) =>
        invoke(targets[index % targets.length].url, 'paid', { who: `call-${index}` }, ACME.headers).then(
          (answer) => (answers[index] = answer),
        ),
      );
      await eventually(() => expect(gate.heldCount + answers.filter(Boolean).length).toBe(10));
      // Nothing has settled yet: only refusals have answered, and the admitted calls are held.
      expect({ held: gate.heldCount, answered: statuses(answers.filter((answer) => answer !== undefined)) }).toEqual({
        held: 3,
        answered: Array(7).fill(402),
      });
      gate.releaseAll();
      return Promise.all(calls);
    }

    /**
     * The 7 refusals came while the 3 admitted calls held the money: each asks to come back
     * after one attempt of the tool (its 5 s timeout), not when the day ends.
     */
    function expectThreeAdmitted(answers: Response[]): void {
      expect(statuses(answers).sort()).toEqual([...Array(3).fill(200), ...Array(7).fill(402)]);
      for (const answer of answers.filter((response) => response.status === 402)) {
        expectBudgetExceeded(answer, 5_000);
      }
    }

    it('admits exactly 3 and refuses 7 with 402 on one app with the memory store', async () => {
      const { gate, up } = await heldUpstream();
      const app = await service({ tools: { paid: httpTool(up.url('/paid')) }, budgets: { tenants: { acme: 3 } } });

      expectThreeAdmitted(await burst([app], gate));

      expect(up.requests).toHaveLength(3);
      expect(await budgetOf(app, 'acme')).toMatchObject({ capUsd: 3, spentUsd: 3, reservedUsd: 0 });
    });

    itRedis('admits exactly 3 and refuses 7 with 402 across two app instances sharing one Redis', async () => {
      const { gate, up } = await heldUpstream();
      const store = redisStore();
      const document = { tools: { paid: httpTool(up.url('/paid')) }, budgets: { tenants: { acme: 3 } } };
      const first = await service(document, store);
      const second = await service(document, store);

      expectThreeAdmitted(await burst([first, second], gate));

      expect(up.requests).toHaveLength(3);
      // A call's money is settled just after its answer, on the connection of the replica that
      // served it: a read on that replica comes after it, a read on the other may come first.
      for (const app of [first, second]) {
        await eventually(async () =>
          expect(await budgetOf(app, 'acme')).toMatchObject({ capUsd: 3, spentUsd: 3, reservedUsd: 0 }),
        );
      }
    });
  });

  describe('each attempt holds its own cost as it starts', () => {
    async function threeAttemptTool(capUsd: number, handler: UpstreamHandler) {
      const up = await upstream(handler);
      const app = await service({
        tools: { paid: httpTool(up.url('/paid'), { maxAttempts: 3 }) },
        budgets: { tenants: { acme: capUsd } },
      });
      return { app, up };
    }

    it('runs a call of three attempts under a cap that covers one attempt', async () => {
      const { app, up } = await threeAttemptTool(1, json(200, { ok: true }));

      const answer = await invoke(app.url, 'paid', {}, ACME.headers);

      expect({ status: answer.status, attempts: answer.body.attempts }).toEqual({ status: 200, attempts: 1 });
      expect(up.requests).toHaveLength(1);
      expect(await budgetOf(app, 'acme')).toMatchObject({ capUsd: 1, spentUsd: 1, reservedUsd: 0 });
    });

    it('refuses 402 before running a call whose first attempt does not fit in what is left', async () => {
      const { app, up } = await threeAttemptTool(1.5, json(200, { ok: true }));
      expect((await invoke(app.url, 'paid', {}, ACME.headers)).status).toBe(200);

      expectBudgetExceeded(await invoke(app.url, 'paid', {}, ACME.headers), UNTIL_MIDNIGHT_MS);

      expect(up.requests).toHaveLength(1);
      expect(await budgetOf(app, 'acme')).toMatchObject({ capUsd: 1.5, spentUsd: 1, reservedUsd: 0 });
    });

    it('charges all three attempts when the upstream fails twice and then succeeds', async () => {
      const { app, up } = await threeAttemptTool(3, inTurn(status(503), status(503), json(200, { ok: true })));
      const failures = async () => (await send('GET', `${app.url}/v1/circuits`)).body.circuits.paid.failures as number;

      const call = invoke(app.url, 'paid', {}, ACME.headers);
      for (let failed = 1; failed <= 2; failed++) {
        // The backoff timer is set in the same turn as the failure is counted.
        await eventually(async () => expect(await failures()).toBe(failed));
        // Charged as it failed; nothing is held while the call waits to retry.
        expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: failed, reservedUsd: 0 });
        await clock.advanceAsync(100);
      }
      const answer = await call;

      expect({ status: answer.status, attempts: answer.body.attempts }).toEqual({ status: 200, attempts: 3 });
      expect(up.requests).toHaveLength(3);
      expect(await budgetOf(app, 'acme')).toMatchObject({ capUsd: 3, spentUsd: 3, reservedUsd: 0 });
    });

    it('charges one attempt when the upstream succeeds at once', async () => {
      const { app, up } = await threeAttemptTool(3, json(200, { ok: true }));

      const answer = await invoke(app.url, 'paid', {}, ACME.headers);

      expect({ status: answer.status, attempts: answer.body.attempts }).toEqual({ status: 200, attempts: 1 });
      expect(up.requests).toHaveLength(1);
      expect(await budgetOf(app, 'acme')).toMatchObject({ capUsd: 3, spentUsd: 1, reservedUsd: 0 });
    });
  });

  describe('calls that are refused or replayed cost nothing', () => {
    it('releases the reservation of a call refused by a full lane and charges it nothing', async () => {
      const { gate, up } = await heldUpstream();
      const app = await service({
        lanes: { solo: { concurrency: 1, queueCapacity: 0 } },
        tools: { paid: { ...httpTool(up.url('/paid')), lane: 'solo' } },
        budgets: { tenants: { acme: 2 } },
      });
      const holder = invoke(app.url, 'paid', { who: 'holder' }, ACME.headers);
      await eventually(() => expect(gate.heldCount).toBe(1));

      expectEnvelope(await invoke(app.url, 'paid', { who: 'refused' }, ACME.headers), 503, 'queue_full');

      // Only the running call still holds its part of the budget.
      expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: 0, reservedUsd: 1 });
      gate.releaseAll();
      expect((await holder).status).toBe(200);
      expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: 1, reservedUsd: 0 });
      // The cap of 2 still has room for one more: the refused call took none of it.
      expect((await invoke(app.url, 'paid', { who: 'after' }, ACME.headers)).status).toBe(200);
      expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: 2, reservedUsd: 0 });
    });

    it('charges a call once when the same Idempotency-Key is sent twice', async () => {
      const up = await upstream();
      const app = await service({ tools: { paid: httpTool(up.url('/paid')) }, budgets: { tenants: { acme: 2 } } });
      const keyed = { ...ACME.headers, 'idempotency-key': 'order-1' };

      const first = await invoke(app.url, 'paid', { order: 1 }, keyed);
      const again = await invoke(app.url, 'paid', { order: 1 }, keyed);

      expect([first.status, first.body.replayed, again.status, again.body.replayed]).toEqual([200, false, 200, true]);
      expect(up.requests).toHaveLength(1);
      expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: 1, reservedUsd: 0 });
      expect((await invoke(app.url, 'paid', { order: 2 }, ACME.headers)).status).toBe(200);
      expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: 2, reservedUsd: 0 });
    });

    it('reserves nothing for a call refused by the rate limit', async () => {
      const up = await upstream();
      const app = await service({
        tools: { paid: httpTool(up.url('/paid')) },
        rateLimits: { tenants: { acme: { rpm: 1 } } },
        budgets: { tenants: { acme: 2 } },
      });
      expect((await invoke(app.url, 'paid', {}, ACME.headers)).status).toBe(200);

      expectEnvelope(await invoke(app.url, 'paid', {}, ACME.headers), 429, 'rate_limited');

      expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: 1, reservedUsd: 0 });
      // A minute later the bucket is full again, and the budget still has room for one call.
      await clock.advanceAsync(60_000);
      expect((await invoke(app.url, 'paid', {}, ACME.headers)).status).toBe(200);
      expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: 2, reservedUsd: 0 });
      expect(up.requests).toHaveLength(2);
    });

    it('charges nothing for a call denied egress', async () => {
      const up = await upstream();
      const app = await service({
        tools: { metadata: httpTool('http://169.254.169.254/latest/meta-data'), paid: httpTool(up.url('/paid')) },
        budgets: { tenants: { acme: 1 } },
      });

      expectEnvelope(await invoke(app.url, 'metadata', {}, ACME.headers), 403, 'egress_denied');

      expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: 0, reservedUsd: 0 });
      expect((await invoke(app.url, 'paid', {}, ACME.headers)).status).toBe(200);
      expect(await budgetOf(app, 'acme')).toMatchObject({ spentUsd: 1, reservedUsd: 0 });
    });
  });

  describe('whose cap applies', () => {
    it('applies defaultUsd to anonymous callers and to tenants without a cap of their own', async () => {
      const app = await service({ tools: { paid: echoTool(1) }, budgets: { defaultUsd: 2, tenants: { acme: 5 } } });

      expect(statuses(await callsInTurn(app, 'paid', 3, GLOBEX.headers))).toEqual([200, 200, 402]);
      expect(statuses(await callsInTurn(app, 'paid', 3))).toEqual([200, 200, 402]);
      expect(statuses(await callsInTurn(app, 'paid', 3, ACME.headers))).toEqual([200, 200, 200]);

      expect(await budgetOf(app, 'globex')).toMatchObject({ capUsd: 2, spentUsd: 2, reservedUsd: 0 });
      expect(await budgetOf(app, 'anonymous')).toMatchObject({ capUsd: 2, spentUsd: 2, reservedUsd: 0 });
      expect(await budgetOf(app, 'acme')).toMatchObject({ capUsd: 5, spentUsd: 3, reservedUsd: 0 });
    });

    it('never refuses a tenant with no cap when there is no default', async () => {
      const app = await service({ tools: { paid: echoTool(1) }, budgets: { tenants: { acme: 1 } } });

      expect(statuses(await callsInTurn(app, 'paid', 5, GLOBEX.headers))).toEqual(Array(5).fill(200));
      expect(statuses(await callsInTurn(app, 'paid', 5))).toEqual(Array(5).fill(200));
      expect(statuses(await callsInTurn(app, 'paid', 2, ACME.headers))).toEqual([200, 402]);

      expect(await budgetOf(app, 'globex')).toMatchObject({ capUsd: null, reservedUsd: 0 });
    });

    it('never refuses a tool without costUsd for budget', async () => {
      const app = await service({
        tools: { paid: echoTool(1), free: echoTool() },
        budgets: { tenants: { acme: 1 } },
      });
      expect(statuses(await callsInTurn(app, 'paid', 2, ACME.headers))).toEqual([200, 402]);

      expect(statuses(await callsInTurn(app, 'free', 5, ACME.headers))).toEqual(Array(5).fill(200));

      expect(await budgetOf(app, 'acme')).toMatchObject({ capUsd: 1, spentUsd: 1, reservedUsd: 0 });
    });
  });

  describe('bulkhead_budget_spent_usd_total', () => {
    it('counts the USD charged to a configured tenant, and to everyone else as "other"', async () => {
      const app = await service({
        tools: { paid: echoTool(1), cheap: echoTool(0.1) },
        budgets: { defaultUsd: 100 },
      });

      await callsInTurn(app, 'paid', 2, ACME.headers);
      await callsInTurn(app, 'cheap', 3, ACME.headers);
      await callsInTurn(app, 'cheap', 1);

      // Summed as micro-dollars: 2 + 3 × 0.1 is exactly 2.3.
      expect(await spentMetric(app, 'acme')).toBe(2.3);
      expect(await spentMetric(app, 'other')).toBe(0.1);
      expect(await spentMetric(app, 'anonymous')).toBeUndefined();
    });

    it('counts nothing for a call refused for its budget', async () => {
      const app = await service({ tools: { paid: echoTool(1) }, budgets: { tenants: { acme: 1 } } });

      expect(statuses(await callsInTurn(app, 'paid', 3, ACME.headers))).toEqual([200, 402, 402]);

      expect(await spentMetric(app, 'acme')).toBe(1);
    });
  });
});
