import { Controller, HttpCode, Module, Post } from '@nestjs/common';
import { FakeClock } from '../../src/common/fake-clock';
import { Bulkhead } from '../../src/route-policies';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, type Response, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { type Deferred, deferred } from '../support/deferred';
import { openaiAnswer } from '../support/llm-answers';
import { connectMcp } from '../mcp/mcp-client';
import { testTenant } from '../support/tenants';
import { heldIn, json, Upstream } from '../support/upstream';

const ACME = testTenant('acme');
const GLOBEX = testTenant('globex');

/** A call of the `hold` tool, which waits a second of the fake clock, as `tenant` at `priority`. */
const asking = (tenant: { headers: Record<string, string> }, priority?: string) =>
  priority === undefined ? tenant.headers : { ...tenant.headers, 'x-bulkhead-priority': priority };

/**
 * Priority classes in a lane (docs/design.md, "Lanes"): a caller asks for its call's class with
 * `X-Bulkhead-Priority`, held to its tenant's ceiling; a higher class starts first, and takes a
 * full queue's place of the newest waiting call of a lower class, which is refused at once.
 */
describe('priority classes in a lane', () => {
  let clock: FakeClock;
  let app: TestApp;

  beforeEach(async () => {
    clock = new FakeClock();
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey, GLOBEX.apiKey] },
        lanes: { work: { concurrency: 1, queueCapacity: 1 }, wide: { concurrency: 1, queueCapacity: 3 } },
        priority: { ceiling: 'standard', tenants: { acme: 'critical' } },
        tools: {
          hold: { lane: 'work', kind: 'builtin', builtin: 'delay' },
          queue: { lane: 'wide', kind: 'builtin', builtin: 'delay' },
          batchable: { lane: 'wide', kind: 'builtin', builtin: 'echo', priorityClass: 'sheddable' },
        },
      },
      { clock },
    );
  });

  afterEach(() => closeOnFakeClock(app, clock));

  const lane = async (name: string) =>
    (await send('GET', `${app.url}/v1/lanes`, { headers: ACME.headers })).body.lanes[name];
  const hold = (tenant: { headers: Record<string, string> }, priority?: string, tool = 'hold') =>
    invoke(app.url, tool, { ms: 1000 }, asking(tenant, priority));

  it('lets a critical call take a sheddable one’s place in a full queue, and refuses that one at once', async () => {
    const running = hold(ACME);
    await eventually(async () => expect((await lane('work')).active).toBe(1));
    const sheddable = hold(GLOBEX, 'sheddable');
    await eventually(async () => expect((await lane('work')).waitingByClass.sheddable).toBe(1));

    const critical = hold(ACME, 'critical');

    const displaced = await sheddable;
    expect(displaced.status).toBe(503);
    expect(displaced.body.error).toMatchObject({ kind: 'queue_full' });
    expect(displaced.headers['retry-after']).toBeDefined();
    expect(await lane('work')).toMatchObject({
      waiting: 1,
      waitingByClass: { critical: 1, standard: 0, sheddable: 0 },
    });
    // Globex's ceiling is standard: asking for critical gets standard, which displaces nothing critical.
    expect((await hold(GLOBEX, 'critical')).status).toBe(503);
    const prom = parsePromText((await send('GET', `${app.url}/metrics`)).body as string);
    expect(sampleValue(prom, 'bulkhead_admissions_total', { lane: 'work', result: 'displaced' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_lane_waiting_by_class', { lane: 'work', class: 'critical' })).toBe(1);

    clock.advance(1000);
    await eventually(async () => expect((await lane('work')).active).toBe(1));
    clock.advance(1000);
    expect((await running).status).toBe(200);
    expect((await critical).status).toBe(200);
  });

  it('starts a higher class first, whatever the order the calls came in', async () => {
    const finished: string[] = [];
    const track = (name: string, answer: Promise<Response>) => answer.then(() => finished.push(name));
    const first = track('first', hold(ACME, undefined, 'queue'));
    await eventually(async () => expect((await lane('wide')).active).toBe(1));
    const calls = [
      track('standard', hold(ACME, 'standard', 'queue')),
      track('sheddable', hold(ACME, 'sheddable', 'queue')),
      track('critical', hold(ACME, 'critical', 'queue')),
    ];
    await eventually(async () => expect((await lane('wide')).waiting).toBe(3));

    for (let call = 0; call < 4; call++) {
      clock.advance(1000);
      await eventually(() => expect(finished).toHaveLength(call + 1));
      if (call < 3) await eventually(async () => expect((await lane('wide')).active).toBe(1));
    }
    await Promise.all([first, ...calls]);
    expect(finished).toEqual(['first', 'critical', 'standard', 'sheddable']);
  });

  it('reads the class over MCP too: a caller’s class in the header, a class that does not exist refused', async () => {
    const running = hold(ACME);
    await eventually(async () => expect((await lane('work')).active).toBe(1));
    const sheddable = hold(GLOBEX, 'sheddable');
    await eventually(async () => expect((await lane('work')).waitingByClass.sheddable).toBe(1));
    const mcp = await connectMcp(app.url, asking(ACME, 'critical'));

    const critical = mcp.client.callTool({ name: 'hold', arguments: { ms: 1000 } });

    expect((await sheddable).status).toBe(503);
    await expect(connectMcp(app.url, asking(ACME, 'urgent'))).rejects.toThrow(/X-Bulkhead-Priority/);
    clock.advance(1000);
    await eventually(async () => expect((await lane('work')).active).toBe(1));
    clock.advance(1000);
    expect((await running).status).toBe(200);
    expect(await critical).toMatchObject({ structuredContent: { toolId: 'hold' } });
    await mcp.client.close();
  });

  it('takes a tool’s own class when the caller says none, and refuses a class that does not exist', async () => {
    const running = hold(ACME, undefined, 'queue');
    await eventually(async () => expect((await lane('wide')).active).toBe(1));
    const batchable = invoke(app.url, 'batchable', {}, ACME.headers);
    await eventually(async () => expect((await lane('wide')).waitingByClass.sheddable).toBe(1));

    const bad = await hold(ACME, 'urgent');

    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({
      kind: 'invalid_request',
      message: 'X-Bulkhead-Priority must be critical, standard or sheddable',
    });
    clock.advance(1000);
    expect((await running).status).toBe(200);
    expect((await batchable).status).toBe(200);
  });
});

/** The same classes on an LLM route: its own `priorityClass`, and the header within the ceiling. */
describe('priority classes on an LLM route', () => {
  let app: TestApp;
  let upstream: Upstream;
  const gates: Array<Deferred<void>> = [];

  beforeEach(async () => {
    upstream = await Upstream.start(heldIn(gates, json(200, openaiAnswer('ok'))));
    app = await createTestApp({
      auth: { apiKeys: [ACME.apiKey, GLOBEX.apiKey] },
      lanes: { llm: { concurrency: 1, queueCapacity: 1 } },
      priority: { tenants: { acme: 'critical' } },
      containment: { egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.0/8'] } },
      llm: {
        routes: {
          chat: {
            lane: 'llm',
            priorityClass: 'sheddable',
            targets: [{ provider: 'openai', model: 'gpt-test', baseUrl: upstream.url('/v1'), apiKey: 'k' }],
          },
        },
        prices: { 'openai/gpt-test': { inputPerMTokUsd: 0, outputPerMTokUsd: 0 } },
      },
    });
  });

  afterEach(async () => {
    for (const gate of gates.splice(0)) gate.resolve();
    await app?.close();
    await upstream?.close();
  });

  const ask = (tenant: { headers: Record<string, string> }, question: string, priority?: string) =>
    send('POST', `${app.url}/v1/chat/completions`, {
      json: { model: 'chat', messages: [{ role: 'user', content: question }] },
      headers: asking(tenant, priority),
    });
  const lane = async () => (await send('GET', `${app.url}/v1/lanes`, { headers: ACME.headers })).body.lanes.llm;

  it('queues a request at its route’s class, and lets a critical one take its place', async () => {
    const running = ask(GLOBEX, 'first');
    await eventually(() => expect(gates).toHaveLength(1));
    const sheddable = ask(GLOBEX, 'second');
    await eventually(async () => expect((await lane()).waitingByClass.sheddable).toBe(1));

    const critical = ask(ACME, 'third', 'critical');

    const displaced = await sheddable;
    expect(displaced.status).toBe(503);
    expect(displaced.body.error).toMatchObject({ type: expect.any(String) });
    expect(await lane()).toMatchObject({ waitingByClass: { critical: 1, standard: 0, sheddable: 0 } });
    expect((await ask(GLOBEX, 'fourth', 'urgent')).status).toBe(400);
    gates[0].resolve();
    await eventually(() => expect(gates).toHaveLength(2));
    gates[1].resolve();
    expect((await running).status).toBe(200);
    expect((await critical).status).toBe(200);
  });
});

/** A company route whose calls wait for the test: its gates, in arrival order. */
const routeGates: Array<Deferred<void>> = [];

@Controller('test/report')
class ReportController {
  @Post()
  @HttpCode(200)
  @Bulkhead('routes', { priorityClass: 'sheddable' })
  async render() {
    const gate = deferred<void>();
    routeGates.push(gate);
    await gate.promise;
    return { rendered: true };
  }
}

@Module({ controllers: [ReportController] })
class ReportModule {}

/** `@Bulkhead` routes: the decorator's class, and the header within the ceiling. */
describe('priority classes on a @Bulkhead route', () => {
  let app: TestApp;

  beforeEach(async () => {
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey, GLOBEX.apiKey] },
        lanes: { routes: { concurrency: 1, queueCapacity: 1 } },
        priority: { tenants: { acme: 'critical' } },
      },
      { imports: [ReportModule] },
    );
  });

  afterEach(async () => {
    for (const gate of routeGates.splice(0)) gate.resolve();
    await app?.close();
  });

  const render = (tenant: { headers: Record<string, string> }, priority?: string) =>
    send('POST', `${app.url}/test/report`, { json: {}, headers: asking(tenant, priority) });
  const lane = async () => (await send('GET', `${app.url}/v1/lanes`, { headers: ACME.headers })).body.lanes.routes;

  it('queues a call at the decorator’s class, and lets a critical one take its place', async () => {
    const running = render(GLOBEX);
    await eventually(() => expect(routeGates).toHaveLength(1));
    const sheddable = render(GLOBEX);
    await eventually(async () => expect((await lane()).waitingByClass.sheddable).toBe(1));

    const critical = render(ACME, 'critical');

    expect((await sheddable).status).toBe(503);
    expect(await lane()).toMatchObject({ waitingByClass: { critical: 1, standard: 0, sheddable: 0 } });
    expect((await render(GLOBEX, 'urgent')).status).toBe(400);
    routeGates[0].resolve();
    await eventually(() => expect(routeGates).toHaveLength(2));
    routeGates[1].resolve();
    expect((await running).status).toBe(200);
    expect((await critical).status).toBe(200);
  });
});
