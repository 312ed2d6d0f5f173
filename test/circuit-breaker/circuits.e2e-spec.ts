import {
  BadGatewayException,
  BadRequestException,
  Controller,
  HttpCode,
  Module,
  Post,
  ServiceUnavailableException,
} from '@nestjs/common';
import { FakeClock } from '../../src/common/fake-clock';
import { Bulkhead, CircuitBreaker } from '../../src/route-policies';
import { closeOnFakeClock } from '../support/close-app';
import { advanceClocks, installFakeTimers } from '../support/fake-timers';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { expectEnvelope, expectNothingLeaked } from '../support/envelope';
import { invoke, type Response, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { getEvents, getLanes } from '../support/service-reads';
import { json, Upstream } from '../support/upstream';

const ADMIN_TOKEN = 'admin-token-0123456789abcdef';
/** What callers send as arguments; it must never reach the ledger. */
const SECRET = 'card-4111-1111-1111-1111';

/** Three attempts in the window, more than half failing, open it for 30 s. */
const FETCH_BREAKER = { volumeThreshold: 3, errorThresholdPercentage: 50, resetTimeoutMs: 30_000 };

/**
 * One http tool `fetch` on `url` (one attempt per call, so each call is one breaker attempt),
 * a builtin `read`, a named breaker `billing-api`, and the admin token.
 */
function config(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    auth: { adminToken: ADMIN_TOKEN },
    lanes: { main: { concurrency: 4, queueCapacity: 4 } },
    tools: {
      fetch: { lane: 'main', kind: 'http', url, timeoutMs: 5000, retry: { maxAttempts: 1 }, breaker: FETCH_BREAKER },
      read: { lane: 'main', kind: 'builtin', builtin: 'echo' },
    },
    breakers: { 'billing-api': { volumeThreshold: 5 } },
    ...extra,
  };
}

const admin = (base: string, path: string, headers: Record<string, string> = {}) =>
  send('POST', `${base}/v1/admin/circuits/${path}`, { headers });

const asAdmin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function circuits(base: string): Promise<Record<string, { state: string; failures: number; successes: number }>> {
  const response = await send('GET', `${base}/v1/circuits`);
  expect(response.status).toBe(200);
  return response.body.circuits;
}

/** Company routes that fail as their dependency does; each counts the times its handler ran. */
const runs = { unavailable: 0, badGateway: 0, badRequest: 0 };

@Controller('test/render')
class RenderController {
  @Post('unavailable')
  @HttpCode(200)
  @Bulkhead('lane')
  @CircuitBreaker('render-api')
  unavailable() {
    runs.unavailable++;
    throw new ServiceUnavailableException();
  }

  @Post('bad-gateway')
  @HttpCode(200)
  @Bulkhead('lane')
  @CircuitBreaker('render-gateway')
  badGateway() {
    runs.badGateway++;
    throw new BadGatewayException();
  }

  @Post('bad-request')
  @HttpCode(200)
  @Bulkhead('lane')
  @CircuitBreaker('render-strict')
  badRequest() {
    runs.badRequest++;
    throw new BadRequestException('the page size is not one we render');
  }
}

@Module({ controllers: [RenderController] })
class RenderModule {}

@Controller('test/bad-breaker')
class BadBreakerController {
  @Post()
  @CircuitBreaker('bad name!')
  handle() {
    return { ok: true };
  }
}

@Module({ controllers: [BadBreakerController] })
class BadBreakerModule {}

@Controller('test/default-breaker')
class DefaultBreakerController {
  @Post()
  @CircuitBreaker('default')
  handle() {
    return { ok: true };
  }
}

@Module({ controllers: [DefaultBreakerController] })
class DefaultBreakerModule {}

// A breaker's open → half-open timer is opossum's own setTimeout: jest's fake timers hold it
// (the I/O queues stay real, so the app still serves on loopback), and advanceClocks moves it
// together with the FakeClock the app runs on.

describe.each(PLATFORMS)('circuit breakers over HTTP, on %s', (platform) => {
  let clock: FakeClock;
  let upstreams: Upstream[] = [];
  let current: TestApp | undefined;

  async function upstream(status: number, body: unknown = { ok: status < 400 }): Promise<Upstream> {
    const started = await Upstream.start(json(status, body));
    upstreams.push(started);
    return started;
  }

  async function service(document: Record<string, unknown>): Promise<TestApp> {
    clock = new FakeClock();
    installFakeTimers(clock);
    current = await createTestApp(document, { clock, platform });
    return current;
  }

  /** `count` calls of `fetch`, one after another; their answers. */
  async function fetchTimes(base: string, count: number, args: Record<string, unknown> = {}): Promise<Response[]> {
    const answers: Response[] = [];
    for (let n = 0; n < count; n++) answers.push(await invoke(base, 'fetch', args));
    return answers;
  }

  afterEach(async () => {
    for (const started of upstreams) await started.close();
    upstreams = [];
    await closeOnFakeClock(current, clock);
    current = undefined;
    jest.useRealTimers();
  });

  describe('a tool breaker', () => {
    it('opens after 3 failed calls and then answers 503 circuit_open without calling the upstream', async () => {
      const up = await upstream(503);
      const app = await service(config(up.url('/')));

      const failed = await fetchTimes(app.url, 3);
      for (const answer of failed) expect(expectEnvelope(answer, 502, 'transient').attempts).toBe(1);
      expect(up.requests).toHaveLength(3);

      const refused = await invoke(app.url, 'fetch', {}, { 'x-call-id': 'refused-1' });

      const error = expectEnvelope(refused, 503, 'circuit_open');
      expect(error).toMatchObject({ attempts: 0, jsonrpcCode: -32008, retryAfterMs: 30_000 });
      expect(refused.headers['retry-after']).toBe('30');
      expect(refused.body).toMatchObject({ callId: 'refused-1', toolId: 'fetch' });
      expect(up.requests).toHaveLength(3);
      expect((await circuits(app.url)).fetch).toEqual({ state: 'open', failures: 3, successes: 0, tenantsOpen: [] });
    });

    it('tells in Retry-After how long is left until it half-opens', async () => {
      const up = await upstream(503);
      const app = await service(config(up.url('/')));
      await fetchTimes(app.url, 3);

      advanceClocks(clock, 12_500);
      const refused = await invoke(app.url, 'fetch', {});

      expect(expectEnvelope(refused, 503, 'circuit_open').retryAfterMs).toBe(17_500);
      expect(refused.headers['retry-after']).toBe('18');
      expect(up.requests).toHaveLength(3);
    });

    it('half-opens resetTimeoutMs after it opened: one probe reaches the upstream and, answered, closes it', async () => {
      const up = await upstream(503);
      const app = await service(config(up.url('/')));
      await fetchTimes(app.url, 3);

      advanceClocks(clock, 29_999);
      expect(expectEnvelope(await invoke(app.url, 'fetch', {}), 503, 'circuit_open').retryAfterMs).toBe(1);
      up.use(json(200, { fine: true }));
      advanceClocks(clock, 1);
      expect((await circuits(app.url)).fetch.state).toBe('half_open');

      const probe = await invoke(app.url, 'fetch', {});

      expect(probe.status).toBe(200);
      expect(up.requests).toHaveLength(4);
      expect((await circuits(app.url)).fetch).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
    });

    it('opens again for a whole resetTimeoutMs when its half-open probe fails', async () => {
      const up = await upstream(503);
      const app = await service(config(up.url('/')));
      await fetchTimes(app.url, 3);
      advanceClocks(clock, 30_000);

      expectEnvelope(await invoke(app.url, 'fetch', {}), 502, 'transient');
      const refused = await invoke(app.url, 'fetch', {});

      expect(expectEnvelope(refused, 503, 'circuit_open').retryAfterMs).toBe(30_000);
      expect(up.requests).toHaveLength(4);
      expect((await circuits(app.url)).fetch.state).toBe('open');
    });

    it('stays closed while the calls are under the volume threshold', async () => {
      const up = await upstream(503);
      const app = await service(config(up.url('/')));

      await fetchTimes(app.url, 2);

      expect((await circuits(app.url)).fetch).toEqual({ state: 'closed', failures: 2, successes: 0, tenantsOpen: [] });
      expectEnvelope(await invoke(app.url, 'fetch', {}), 502, 'transient');
      expect(up.requests).toHaveLength(3);
    });

    it('never opens on upstream 400s, which are the caller’s fault (schema)', async () => {
      const up = await upstream(400, { error: 'bad page size' });
      const app = await service(config(up.url('/')));

      const answers = await fetchTimes(app.url, 6);

      for (const answer of answers) expectEnvelope(answer, 400, 'schema');
      expect(up.requests).toHaveLength(6);
      expect((await circuits(app.url)).fetch).toMatchObject({ state: 'closed', failures: 0 });
      // The 400s count as attempts that went well: two 503s among eight are under half.
      up.use(json(503, {}));
      for (const answer of await fetchTimes(app.url, 2)) expectEnvelope(answer, 502, 'transient');
      expect((await circuits(app.url)).fetch.state).toBe('closed');
      expect(up.requests).toHaveLength(8);
    });

    it('lets a call through again once the upstream is healthy and the circuit closed (operator close)', async () => {
      const up = await upstream(503);
      const app = await service(config(up.url('/')));
      await fetchTimes(app.url, 3);
      expectEnvelope(await invoke(app.url, 'fetch', {}), 503, 'circuit_open');

      up.use(json(200, { fine: true }));
      expect((await admin(app.url, 'fetch/close', asAdmin)).status).toBe(200);
      const answer = await invoke(app.url, 'fetch', {});

      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ result: { fine: true }, attempts: 1 });
      expect(up.requests).toHaveLength(4);
      // The window starts afresh: the three old failures do not reopen it.
      expect((await circuits(app.url)).fetch).toEqual({ state: 'closed', failures: 0, successes: 1, tenantsOpen: [] });
    });
  });

  describe('GET /v1/circuits', () => {
    it('lists every tool’s breaker and each named breaker of the config, closed, from start-up', async () => {
      const up = await upstream(200);
      const app = await service(config(up.url('/')));

      const response = await send('GET', `${app.url}/v1/circuits`);

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        circuits: {
          fetch: { state: 'closed', failures: 0, successes: 0, tenantsOpen: [] },
          read: { state: 'closed', failures: 0, successes: 0, tenantsOpen: [] },
          'billing-api': { state: 'closed', failures: 0, successes: 0, tenantsOpen: [] },
        },
      });
    });

    it('counts the failures and successes of the window per breaker', async () => {
      const up = await upstream(200);
      const app = await service(config(up.url('/')));
      await fetchTimes(app.url, 2);
      up.use(json(503, {}));
      await fetchTimes(app.url, 1);
      expect((await invoke(app.url, 'read', { a: 1 })).status).toBe(200);

      const listed = await circuits(app.url);

      expect(listed.fetch).toEqual({ state: 'closed', failures: 1, successes: 2, tenantsOpen: [] });
      expect(listed.read).toEqual({ state: 'closed', failures: 0, successes: 1, tenantsOpen: [] });
      expect(listed['billing-api']).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
    });
  });

  describe('admin routes', () => {
    it('opens a circuit by hand: the next call is circuit_open and the upstream sees no request', async () => {
      const up = await upstream(200);
      const app = await service(config(up.url('/')));

      const opened = await admin(app.url, 'fetch/open', asAdmin);

      expect(opened.status).toBe(200);
      expect(opened.body).toMatchObject({ circuit: 'fetch', state: 'open' });
      const refused = await invoke(app.url, 'fetch', {});
      const error = expectEnvelope(refused, 503, 'circuit_open');
      expect(error.attempts).toBe(0);
      expect(refused.headers['retry-after']).toBeDefined();
      expect(up.requests).toHaveLength(0);
      expect((await circuits(app.url)).fetch.state).toBe('open');
    });

    it('keeps a circuit opened by hand open past its reset timeout, until it is closed by hand', async () => {
      const up = await upstream(200);
      const app = await service(config(up.url('/')));
      expect((await admin(app.url, 'fetch/open', asAdmin)).status).toBe(200);

      advanceClocks(clock, 60_000);
      expectEnvelope(await invoke(app.url, 'fetch', {}), 503, 'circuit_open');
      expect(up.requests).toHaveLength(0);

      const closed = await admin(app.url, 'fetch/close', asAdmin);

      expect(closed.status).toBe(200);
      expect(closed.body).toMatchObject({ circuit: 'fetch', state: 'closed' });
      const answer = await invoke(app.url, 'fetch', {});
      expect(answer.status).toBe(200);
      expect(up.requests).toHaveLength(1);
    });

    it('opens and closes a named breaker of the config', async () => {
      const up = await upstream(200);
      const app = await service(config(up.url('/')));

      expect((await admin(app.url, 'billing-api/open', asAdmin)).status).toBe(200);
      expect((await circuits(app.url))['billing-api'].state).toBe('open');
      expect((await circuits(app.url)).fetch.state).toBe('closed');
      expect((await admin(app.url, 'billing-api/close', asAdmin)).status).toBe(200);
      expect((await circuits(app.url))['billing-api'].state).toBe('closed');
    });

    it.each([
      ['no Authorization header', {}],
      ['a wrong token', { authorization: 'Bearer admin-token-0123456789abcdeX' }],
      ['a longer token that starts with the right one', { authorization: `Bearer ${ADMIN_TOKEN}0` }],
      ['the right token under another scheme', { authorization: `Basic ${ADMIN_TOKEN}` }],
      ['the bare token', { authorization: ADMIN_TOKEN }],
    ])('answers 401 unauthorized to %s and leaves the circuit as it was', async (_label, headers) => {
      const up = await upstream(200);
      const app = await service(config(up.url('/')));

      const opened = await admin(app.url, 'fetch/open', headers);

      expectEnvelope(opened, 401, 'unauthorized');
      expectNothingLeaked(opened, ADMIN_TOKEN);
      expect((await circuits(app.url)).fetch.state).toBe('closed');
      expect((await invoke(app.url, 'fetch', {})).status).toBe(200);
      expect(up.requests).toHaveLength(1);
    });

    it('refuses to close an open circuit without the token', async () => {
      const up = await upstream(200);
      const app = await service(config(up.url('/')));
      expect((await admin(app.url, 'fetch/open', asAdmin)).status).toBe(200);

      expectEnvelope(
        await admin(app.url, 'fetch/close', { authorization: 'Bearer not-the-admin-token' }),
        401,
        'unauthorized',
      );

      expect((await circuits(app.url)).fetch.state).toBe('open');
      expect(up.requests).toHaveLength(0);
    });

    it('answers 404 not_found for an unknown circuit name', async () => {
      const up = await upstream(200);
      const app = await service(config(up.url('/')));

      const opened = await admin(app.url, 'no-such-circuit/open', asAdmin);

      expectEnvelope(opened, 404, 'not_found');
      expect(Object.keys(await circuits(app.url)).sort()).toEqual(['billing-api', 'fetch', 'read']);
    });

    it('does not echo an unknown circuit name that could not be one', async () => {
      const up = await upstream(200);
      const app = await service(config(up.url('/')));

      const opened = await admin(app.url, `${encodeURIComponent('<img src=x>')}/open`, asAdmin);

      expectEnvelope(opened, 404, 'not_found');
      expectNothingLeaked(opened, '<img', 'src=x');
    });

    it('answers 404 not_found, as for an unknown route, when the config has no admin token', async () => {
      const up = await upstream(200);
      const app = await service(config(up.url('/'), { auth: {} }));

      const opened = await admin(app.url, 'fetch/open', asAdmin);
      const unknownRoute = await send('POST', `${app.url}/v1/admin/no-such-route`, { headers: asAdmin });

      expectEnvelope(opened, 404, 'not_found');
      expect(opened.body).toEqual(unknownRoute.body);
      expectEnvelope(await admin(app.url, 'fetch/close'), 404, 'not_found');
      expect((await circuits(app.url)).fetch.state).toBe('closed');
      expect((await invoke(app.url, 'fetch', {})).status).toBe(200);
    });
  });

  describe('metrics and events', () => {
    it('shows the state (0 closed, 2 open) and counts the transitions to open per breaker', async () => {
      const up = await upstream(503);
      const app = await service(config(up.url('/')));
      const scrape = async () => parsePromText((await send('GET', `${app.url}/metrics`)).body as string);

      let prom = await scrape();
      expect(sampleValue(prom, 'bulkhead_circuit_state', { breaker: 'fetch' })).toBe(0);
      expect(sampleValue(prom, 'bulkhead_circuit_state', { breaker: 'billing-api' })).toBe(0);
      expect(sampleValue(prom, 'bulkhead_circuit_transitions_total', { breaker: 'fetch', to: 'open' })).toBe(0);

      await fetchTimes(app.url, 3);

      prom = await scrape();
      expect(sampleValue(prom, 'bulkhead_circuit_state', { breaker: 'fetch' })).toBe(2);
      expect(sampleValue(prom, 'bulkhead_circuit_transitions_total', { breaker: 'fetch', to: 'open' })).toBe(1);
      expect(sampleValue(prom, 'bulkhead_circuit_state', { breaker: 'read' })).toBe(0);
      expect(sampleValue(prom, 'bulkhead_circuit_transitions_total', { breaker: 'read', to: 'open' })).toBe(0);

      expect((await admin(app.url, 'fetch/close', asAdmin)).status).toBe(200);
      expect((await admin(app.url, 'fetch/open', asAdmin)).status).toBe(200);

      prom = await scrape();
      expect(sampleValue(prom, 'bulkhead_circuit_state', { breaker: 'fetch' })).toBe(2);
      expect(sampleValue(prom, 'bulkhead_circuit_transitions_total', { breaker: 'fetch', to: 'open' })).toBe(2);
      expect(sampleValue(prom, 'bulkhead_circuit_transitions_total', { breaker: 'fetch', to: 'closed' })).toBe(1);
    });

    it('records a breaker_open event named after the breaker, with no call fields and no arguments', async () => {
      const up = await upstream(503);
      const app = await service(config(up.url('/')));

      await fetchTimes(app.url, 3, { card: SECRET });

      const events = await getEvents(app.url);
      const opened = events.filter((event) => event.status === 'breaker_open');
      expect(opened).toEqual([
        { at: expect.any(String), callId: '', toolId: 'fetch', lane: '', tenant: '', status: 'breaker_open' },
      ]);
      // The calls that opened it are in the ledger as calls; the transition is its own line.
      expect(events.filter((event) => event.status === 'transient')).toHaveLength(3);
      expect(events.findIndex((event) => event.status === 'breaker_open')).toBeGreaterThanOrEqual(2);
      expect(JSON.stringify(events)).not.toContain(SECRET);
    });
  });
});

describe.each(PLATFORMS)('@CircuitBreaker on a company route with @Bulkhead, on %s', (platform) => {
  let clock: FakeClock;
  let current: TestApp | undefined;

  const CONFIG = {
    auth: { adminToken: ADMIN_TOKEN },
    lanes: { lane: { concurrency: 2, queueCapacity: 2 } },
    breakers: {
      'render-api': FETCH_BREAKER,
      'render-gateway': FETCH_BREAKER,
      'render-strict': FETCH_BREAKER,
    },
  };

  beforeEach(async () => {
    runs.unavailable = runs.badGateway = runs.badRequest = 0;
    clock = new FakeClock();
    installFakeTimers(clock);
    current = await createTestApp(CONFIG, { clock, imports: [RenderModule], platform });
  });

  afterEach(async () => {
    await closeOnFakeClock(current, clock);
    current = undefined;
    jest.useRealTimers();
  });

  const post = (path: string, callId?: string) =>
    send('POST', `${current!.url}/test/render/${path}`, { headers: callId ? { 'x-call-id': callId } : {} });

  it('knows the route’s breakers from start-up', async () => {
    const listed = await circuits(current!.url);

    expect(listed).toEqual({
      'render-api': { state: 'closed', failures: 0, successes: 0, tenantsOpen: [] },
      'render-gateway': { state: 'closed', failures: 0, successes: 0, tenantsOpen: [] },
      'render-strict': { state: 'closed', failures: 0, successes: 0, tenantsOpen: [] },
    });
  });

  it('opens after the volume of ServiceUnavailableExceptions and then refuses without running the handler', async () => {
    for (let n = 0; n < 3; n++) expect((await post('unavailable')).status).toBe(503);
    expect(runs.unavailable).toBe(3);

    const refused = await post('unavailable', 'render-refused');

    const error = expectEnvelope(refused, 503, 'circuit_open');
    expect(error).toMatchObject({ attempts: 0, jsonrpcCode: -32008, retryAfterMs: 30_000 });
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.headers['x-call-id']).toBe('render-refused');
    expect(refused.body.callId).toBe('render-refused');
    expect(runs.unavailable).toBe(3);
    expect((await circuits(current!.url))['render-api']).toEqual({
      state: 'open',
      failures: 3,
      successes: 0,
      tenantsOpen: [],
    });
    // The refusal took no lane slot, and it is in the ledger as the route's call.
    expect((await getLanes(current!.url)).lane).toMatchObject({ active: 0, waiting: 0 });
    expect((await getEvents(current!.url)).at(-1)).toMatchObject({
      callId: 'render-refused',
      toolId: 'RenderController.unavailable',
      lane: 'lane',
      status: 'circuit_open',
    });
  });

  it('opens after the volume of BadGatewayExceptions and then refuses without running the handler', async () => {
    for (let n = 0; n < 3; n++) {
      const answer = await post('bad-gateway');
      expect(answer.status).toBeGreaterThanOrEqual(500);
      expect(answer.body.error.kind).not.toBe('circuit_open');
    }
    expect(runs.badGateway).toBe(3);

    expectEnvelope(await post('bad-gateway'), 503, 'circuit_open');
    expectEnvelope(await post('bad-gateway'), 503, 'circuit_open');

    expect(runs.badGateway).toBe(3);
    expect((await circuits(current!.url))['render-gateway'].state).toBe('open');
  });

  // A failed dependency is `transient`, HTTP 502, for every client. The breaker already counts a
  // BadGatewayException as the dependency's failure; the client must not be told it was our bug.
  it('answers a BadGatewayException of a guarded route as 502 transient, not 500 internal', async () => {
    const answer = await post('bad-gateway');

    expectEnvelope(answer, 502, 'transient');
    expect(runs.badGateway).toBe(1);
  });

  // `attempts` is 0 only when the handler never ran (circuit_open, queue_full): a client reads it
  // to know whether the work may have happened. Here the handler ran.
  it('reports attempts 1 in the envelope of a guarded route whose handler ran and failed', async () => {
    const answer = await post('unavailable');

    expect(runs.unavailable).toBe(1);
    expect(expectEnvelope(answer, 503, 'unavailable').attempts).toBe(1);
  });

  it('never opens on BadRequestException: every call runs the handler', async () => {
    for (let n = 0; n < 6; n++) {
      const answer = await post('bad-request');
      expectEnvelope(answer, 400, 'invalid_request');
    }

    expect(runs.badRequest).toBe(6);
    expect((await circuits(current!.url))['render-strict']).toMatchObject({ state: 'closed', failures: 0 });
  });

  it('keeps breakers of different routes apart', async () => {
    for (let n = 0; n < 3; n++) await post('unavailable');
    expectEnvelope(await post('unavailable'), 503, 'circuit_open');

    expectEnvelope(await post('bad-request'), 400, 'invalid_request');

    expect(runs.badRequest).toBe(1);
    expect((await circuits(current!.url))['render-strict'].state).toBe('closed');
  });

  it('lets an operator hold the route’s breaker open: no handler runs until it is closed', async () => {
    const opened = await send('POST', `${current!.url}/v1/admin/circuits/render-strict/open`, { headers: asAdmin });
    expect(opened.status).toBe(200);

    expectEnvelope(await post('bad-request'), 503, 'circuit_open');
    expect(runs.badRequest).toBe(0);

    const closed = await send('POST', `${current!.url}/v1/admin/circuits/render-strict/close`, { headers: asAdmin });
    expect(closed.status).toBe(200);
    expectEnvelope(await post('bad-request'), 400, 'invalid_request');
    expect(runs.badRequest).toBe(1);
  });
});

describe('@CircuitBreaker with an invalid name', () => {
  it('makes the app refuse to start, naming the route and the rule', async () => {
    await expect(
      createTestApp({ lanes: { lane: { concurrency: 1, queueCapacity: 0 } } }, { imports: [BadBreakerModule] }),
    ).rejects.toThrow(/@CircuitBreaker\('bad name!'\) on BadBreakerController\.handle: a breaker name is/);
  });

  it("makes the app refuse to start when the name is 'default'", async () => {
    await expect(
      createTestApp({ lanes: { lane: { concurrency: 1, queueCapacity: 0 } } }, { imports: [DefaultBreakerModule] }),
    ).rejects.toThrow(/@CircuitBreaker\('default'\) on DefaultBreakerController\.handle/);
  });
});
