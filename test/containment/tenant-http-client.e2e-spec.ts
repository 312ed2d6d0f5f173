import { Body, Controller, HttpCode, Inject, Injectable, Module, Post } from '@nestjs/common';
import { FakeClock } from '../../src/common/fake-clock';
import { TenantHttpClient } from '../../src/containment';
import { Tool, type ToolArguments, type ToolContext } from '../../src/dispatch';
import { Bulkhead, CallSignal } from '../../src/route-policies';
import { type AbortableRequest, abortableRequest } from '../support/abortable-request';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope, expectNothingLeaked } from '../support/envelope';
import { eventually } from '../support/eventually';
import { invoke, type Response, send } from '../support/http-client';
import { parsePromText, type PromText, sampleValue } from '../support/prom-text';
import { getLanes } from '../support/service-reads';
import { hang, Upstream, type UpstreamHandler } from '../support/upstream';
import { WhoGate } from '../support/who-gate';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';

const ACME = testTenant('acme');
const EVIL = testTenant('evil', 'evil-key-9876543210');
const AS_ACME = ACME.headers;
const AS_EVIL = EVIL.headers;

/** Where the company's routes send their requests; set by each test. */
let target = '';

/** What a company route answers: the upstream's status and the JSON it returned. */
async function forward(http: TenantHttpClient, body: unknown, signal: AbortSignal) {
  const response = await http.request(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  return { status: response.statusCode, echoed: JSON.parse(response.body.toString('utf8')) as unknown };
}

/** A company's own controller that calls its dependency through TenantHttpClient, as docs/http-contract.md section 9 describes. */
@Controller('test/outbound')
class OutboundController {
  constructor(@Inject(TenantHttpClient) private readonly http: TenantHttpClient) {}

  @Post('call')
  @HttpCode(200)
  call(@Body() body: unknown, @CallSignal() signal: AbortSignal) {
    return forward(this.http, body, signal);
  }

  @Post('bulkhead')
  @HttpCode(200)
  @Bulkhead('routes')
  underBulkhead(@Body() body: unknown, @CallSignal() signal: AbortSignal) {
    return forward(this.http, body, signal);
  }

  /** Forgets the call's signal: a timeout signal of its own. */
  @Post('timeout-signal')
  @HttpCode(200)
  timeoutSignal(@Body() body: unknown) {
    return forward(this.http, body, AbortSignal.timeout(5_000));
  }

  /** Forgets the call's signal: a fresh controller's. */
  @Post('fresh-signal')
  @HttpCode(200)
  freshSignal(@Body() body: unknown) {
    return forward(this.http, body, new AbortController().signal);
  }

  /** Plain JavaScript that leaves the signal out, which TypeScript would not let it. */
  @Post('no-signal')
  @HttpCode(200)
  noSignal(@Body() body: unknown) {
    return forward(this.http, body, undefined as unknown as AbortSignal);
  }
}

/** A company's `@Tool` that calls the same dependency through its `ctx.http`, retried twice. */
@Injectable()
class OutboundTools {
  @Tool('acme.forward', { lane: 'main', retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 } })
  async forward(args: ToolArguments, context: ToolContext) {
    const response = await context.http.request(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(args),
    });
    return { status: response.statusCode };
  }
}

@Module({ controllers: [OutboundController], providers: [OutboundTools] })
class OutboundModule {}

function config(containment: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    auth: {
      adminToken: ADMIN_TOKEN,
      apiKeys: [ACME.apiKey, EVIL.apiKey],
    },
    lanes: { main: { concurrency: 4, queueCapacity: 4 }, routes: { concurrency: 16, queueCapacity: 16 } },
    containment: { pools: { normalMaxConcurrency: 32, isolatedMaxConcurrency: 2 }, ...containment },
  };
}

const outbound = (base: string, route: string, body: unknown, headers: Record<string, string>) =>
  send('POST', `${base}/test/outbound/${route}`, { json: body, headers });

async function scrape(base: string): Promise<PromText> {
  const response = await send('GET', `${base}/metrics`);
  expect(response.status).toBe(200);
  return parsePromText(response.body as string);
}

const poolGauge = (prom: PromText, name: 'active' | 'peak', pool: 'normal' | 'isolated') =>
  sampleValue(prom, `bulkhead_http_pool_${name}`, { pool });

describe('TenantHttpClient in a company controller', () => {
  let clock: FakeClock;
  let gate: WhoGate;
  let upstreams: Upstream[] = [];
  let requests: AbortableRequest[] = [];
  let current: TestApp | undefined;

  async function upstream(handler: UpstreamHandler = gate.handler): Promise<Upstream> {
    const started = await Upstream.start(handler);
    upstreams.push(started);
    target = started.url('/dependency');
    return started;
  }

  async function service(containment: Record<string, unknown> = {}): Promise<TestApp> {
    clock = new FakeClock();
    current = await createTestApp(config(containment), { clock, imports: [OutboundModule] });
    return current;
  }

  async function containEvil(base: string): Promise<void> {
    const response = await send('PUT', `${base}/v1/admin/containment/evil`, {
      json: { state: 'active', posture: 'degraded' },
      headers: AS_ADMIN,
    });
    expect(response.status).toBe(200);
  }

  beforeEach(() => {
    gate = new WhoGate(true);
  });

  afterEach(async () => {
    gate.releaseAll();
    for (const request of requests) await request.dispose();
    requests = [];
    for (const started of upstreams) await started.close();
    upstreams = [];
    if (current) await closeOnFakeClock(current, clock);
    current = undefined;
  });

  it('sends a normal tenant’s and a contained tenant’s requests on disjoint sockets', async () => {
    const up = await upstream();
    const app = await service();
    await containEvil(app.url);

    const answers = await Promise.all(
      [0, 1, 2].flatMap((n) => [
        outbound(app.url, 'call', { who: 'acme', n }, AS_ACME),
        outbound(app.url, 'call', { who: 'evil', n }, AS_EVIL),
      ]),
    );

    for (const answer of answers) expect(answer.status).toBe(200);
    expect(answers[0].body).toEqual({ status: 200, echoed: { who: 'acme', n: 0 } });
    expect(up.requests).toHaveLength(6);
    expect(up.requests.every((request) => request.method === 'POST' && request.path === '/dependency')).toBe(true);
    const evilPorts = gate.ports('evil');
    expect(evilPorts.size).toBeGreaterThan(0);
    for (const port of gate.ports('acme')) expect(evilPorts.has(port)).toBe(false);
    const prom = await scrape(app.url);
    expect(poolGauge(prom, 'peak', 'normal')).toBeGreaterThanOrEqual(1);
    expect(poolGauge(prom, 'peak', 'isolated')).toBeGreaterThanOrEqual(1);
  });

  it('caps a contained tenant’s requests at isolatedMaxConcurrency while a normal tenant’s run together', async () => {
    gate = new WhoGate();
    await upstream();
    const app = await service();
    await containEvil(app.url);

    const contained = Array.from({ length: 6 }, (_, n) => outbound(app.url, 'call', { who: 'evil', n }, AS_EVIL));
    await eventually(() => expect(gate.inFlight('evil')).toBe(2));
    const normal = Array.from({ length: 4 }, (_, n) => outbound(app.url, 'call', { who: 'acme', n }, AS_ACME));
    await eventually(() => expect(gate.inFlight('acme')).toBe(4));
    expect(gate.inFlight('evil')).toBe(2);
    gate.releaseAll();
    const answers = await Promise.all([...contained, ...normal]);

    for (const answer of answers) expect(answer.status).toBe(200);
    expect(gate.peak('evil')).toBe(2);
    expect(gate.peak('acme')).toBe(4);
    expect(poolGauge(await scrape(app.url), 'peak', 'isolated')).toBe(2);
    for (const port of gate.ports('acme')) expect(gate.ports('evil').has(port)).toBe(false);
  });

  it.each(['timeout-signal', 'fresh-signal', 'no-signal'])(
    'sends a request that does not carry the call’s signal (%s) through the isolated pool',
    async (route) => {
      gate = new WhoGate();
      await upstream();
      const app = await service();
      // The normal pool's socket stays open, so its port cannot be handed to another socket.
      gate.releaseAll();
      expect((await outbound(app.url, 'call', { who: 'normal' }, AS_ACME)).status).toBe(200);
      gate = new WhoGate();
      upstreams[0].use(gate.handler);

      const pending = outbound(app.url, route, { who: 'unsigned' }, AS_ACME);
      await eventually(() => expect(gate.inFlight('unsigned')).toBe(1));
      const prom = await scrape(app.url);
      gate.releaseAll();
      const answer = await pending;

      expect(answer.status).toBe(200);
      expect({ isolated: poolGauge(prom, 'active', 'isolated'), normal: poolGauge(prom, 'active', 'normal') }).toEqual({
        isolated: 1,
        normal: 0,
      });
      expect(upstreams[0].requests.map((request) => request.remotePort)).toHaveLength(2);
      const [normalPort, unsignedPort] = upstreams[0].requests.map((request) => request.remotePort);
      expect(unsignedPort).not.toBe(normalPort);
    },
  );

  it('aborts the outbound request when the client disconnects', async () => {
    const up = await upstream(hang);
    const app = await service();
    const request = abortableRequest('POST', `${app.url}/test/outbound/call`, {
      json: { who: 'acme' },
      headers: AS_ACME,
    });
    requests.push(request);
    await eventually(() => expect(up.inFlight).toBe(1));

    await request.abort();

    await eventually(() => expect(up.abandoned).toBe(1));
    expect(up.inFlight).toBe(0);
    await eventually(async () => expect(poolGauge(await scrape(app.url), 'active', 'normal')).toBe(0));
  });

  it('answers 403 egress_denied for a destination the egress policy refuses, with no connection made', async () => {
    const up = await upstream();
    const app = await service({ egress: { allowHosts: ['*'], allowPrivateCidrs: [] } });

    const answers: Response[] = [
      await outbound(app.url, 'call', { who: 'acme' }, AS_ACME),
      await outbound(app.url, 'call', { who: 'anonymous' }, {}),
      await outbound(app.url, 'bulkhead', { who: 'acme' }, AS_ACME),
    ];

    for (const answer of answers) {
      const error = expectEnvelope(answer, 403, 'egress_denied');
      expect(error.jsonrpcCode).toBe(-32013);
      expect(error.message).toContain('containment.egress.allowPrivateCidrs');
      expectNothingLeaked(answer, String(up.port), target);
    }
    expect(up.connections).toBe(0);
    expect(up.requests).toHaveLength(0);
  });

  it('answers 403 egress_denied for a host outside allowHosts, with no connection made', async () => {
    const up = await upstream();
    const app = await service({ egress: { allowHosts: ['api.example.com'], allowPrivateCidrs: ['127.0.0.0/8'] } });

    const answer = await outbound(app.url, 'call', { who: 'acme' }, AS_ACME);

    expect(expectEnvelope(answer, 403, 'egress_denied').message).toBe(
      "host '127.0.0.1' is not in containment.egress.allowHosts",
    );
    expectNothingLeaked(answer, String(up.port));
    expect(up.connections).toBe(0);
  });

  it('answers 502 transient, not 500, when the upstream cannot be reached, on a plain route and under @Bulkhead', async () => {
    const gone = await Upstream.start();
    const port = String(gone.port);
    target = gone.url('/dependency');
    await gone.close(); // its port now refuses connections
    const app = await service();

    for (const route of ['call', 'bulkhead']) {
      const answer = await outbound(app.url, route, { who: 'acme' }, AS_ACME);
      const error = expectEnvelope(answer, 502, 'transient');
      expect(error.message).toBe('the upstream of an outbound request could not be reached (ECONNREFUSED)');
      expectNothingLeaked(answer, port, target);
    }
  });

  it("fails a @Tool's ctx.http alike: 502 transient, retried, the socket's error never shown", async () => {
    const gone = await Upstream.start();
    const port = String(gone.port);
    target = gone.url('/dependency');
    await gone.close();
    const app = await service();

    let answer: Response | undefined;
    void invoke(app.url, 'acme.forward', { who: 'acme' }, AS_ACME).then((answered) => (answer = answered));
    // Each retry's backoff passes on the virtual clock.
    await eventually(async () => {
      await clock.advanceAsync(1);
      if (!answer) throw new Error('not answered yet');
    });
    const error = expectEnvelope(answer!, 502, 'transient');
    expect(error.message).toBe("upstream of tool 'acme.forward' could not be reached (ECONNREFUSED)");
    expect(error.attempts).toBe(3);
    expectNothingLeaked(answer!, port, target);
  });

  it('routes by tenant on a route with @Bulkhead too', async () => {
    gate = new WhoGate();
    await upstream();
    const app = await service();
    await containEvil(app.url);

    const contained = Array.from({ length: 4 }, (_, n) => outbound(app.url, 'bulkhead', { who: 'evil', n }, AS_EVIL));
    await eventually(() => expect(gate.inFlight('evil')).toBe(2));
    const normal = outbound(app.url, 'bulkhead', { who: 'acme' }, AS_ACME);
    await eventually(() => expect(gate.inFlight('acme')).toBe(1));
    expect((await getLanes(app.url)).routes).toMatchObject({ active: 5 });
    gate.releaseAll();
    const answers = await Promise.all([...contained, normal]);

    for (const answer of answers) expect(answer.status).toBe(200);
    expect(answers[4].body).toEqual({ status: 200, echoed: { who: 'acme' } });
    expect(gate.peak('evil')).toBe(2);
    for (const port of gate.ports('acme')) expect(gate.ports('evil').has(port)).toBe(false);
    expect((await getLanes(app.url)).routes).toMatchObject({ active: 0, peakActive: 5 });
  });
});
