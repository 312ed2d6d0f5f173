import { Controller, HttpCode, Module, Post } from '@nestjs/common';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope, expectNothingLeaked } from '../support/envelope';
import { eventually } from '../support/eventually';
import { invoke, type Response, send } from '../support/http-client';
import { parsePromText, type PromText, sampleValue } from '../support/prom-text';
import { getEvents, getLanes } from '../support/service-reads';
import { Upstream } from '../support/upstream';
import { WhoGate } from '../support/who-gate';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';

const ACME = testTenant('acme');
const EVIL = testTenant('evil', 'evil-key-9876543210');
const AS_ACME = ACME.headers;
const AS_EVIL = EVIL.headers;
const ANONYMOUS = {};

/** A company's own route, counting the times its handler ran. */
let companyRuns = 0;

@Controller('test/company')
class CompanyController {
  @Post()
  @HttpCode(200)
  handle() {
    companyRuns++;
    return { ok: true };
  }
}

@Module({ controllers: [CompanyController] })
class CompanyModule {}

function config(upstreamUrl: string, containment: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    auth: {
      adminToken: ADMIN_TOKEN,
      apiKeys: [ACME.apiKey, EVIL.apiKey],
    },
    lanes: { main: { concurrency: 64, queueCapacity: 256 } },
    tools: {
      fetch: { lane: 'main', kind: 'http', url: upstreamUrl, retry: { maxAttempts: 1 } },
      secret: { lane: 'main', kind: 'http', url: upstreamUrl, retry: { maxAttempts: 1 }, containment: 'deny' },
      read: { lane: 'main', kind: 'builtin', builtin: 'echo' },
    },
    containment: { pools: { normalMaxConcurrency: 32, isolatedMaxConcurrency: 2 }, ...containment },
  };
}

const putContainment = (base: string, tenant: string, body: unknown, headers: Record<string, string> = AS_ADMIN) =>
  send('PUT', `${base}/v1/admin/containment/${tenant}`, { json: body, headers });

const getContainment = (base: string, tenant: string, headers: Record<string, string> = AS_ADMIN) =>
  send('GET', `${base}/v1/admin/containment/${tenant}`, { headers });

/** Sets a tenant's containment as an operator would; the snapshot it answers. */
async function contain(base: string, tenant: string, body: Record<string, unknown>) {
  const response = await putContainment(base, tenant, body);
  expect(response.status).toBe(200);
  return response.body as { tenant: string; state: string; posture: string; reason: string; version: number };
}

async function scrape(base: string): Promise<{ text: string; prom: PromText }> {
  const response = await send('GET', `${base}/metrics`);
  expect(response.status).toBe(200);
  return { text: response.body as string, prom: parsePromText(response.body as string) };
}

function poolGauge(prom: PromText, name: 'active' | 'peak', pool: 'normal' | 'isolated'): number | undefined {
  return sampleValue(prom, `bulkhead_http_pool_${name}`, { pool });
}

function routes(prom: PromText, pool: string, reason: string): number {
  return sampleValue(prom, 'bulkhead_containment_routes_total', { pool, reason }) ?? 0;
}

describe('containment: tenants routed to the normal or isolated pool', () => {
  let clock: FakeClock;
  let gate: WhoGate;
  let upstreams: Upstream[] = [];
  let current: TestApp | undefined;

  async function upstream(): Promise<Upstream> {
    const started = await Upstream.start(gate.handler);
    upstreams.push(started);
    return started;
  }

  async function service(document: Record<string, unknown>): Promise<TestApp> {
    clock = new FakeClock();
    current = await createTestApp(document, { clock, imports: [CompanyModule] });
    return current;
  }

  /** A gated upstream behind `fetch` and `secret`, and the app in front of it. */
  async function setup(containment: Record<string, unknown> = {}): Promise<{ app: TestApp; up: Upstream }> {
    const up = await upstream();
    const app = await service(config(up.url('/tool'), containment));
    return { app, up };
  }

  beforeEach(() => {
    gate = new WhoGate();
    gate.releaseAll();
    companyRuns = 0;
  });

  afterEach(async () => {
    gate.releaseAll();
    for (const started of upstreams) await started.close();
    upstreams = [];
    if (current) await closeOnFakeClock(current, clock);
    current = undefined;
  });

  describe('pools', () => {
    it('serves a contained tenant on sockets disjoint from a normal tenant’s', async () => {
      const { app, up } = await setup();
      await contain(app.url, 'evil', { state: 'active', posture: 'degraded' });

      const answers = await Promise.all(
        [0, 1, 2, 3].flatMap((n) => [
          invoke(app.url, 'fetch', { who: 'acme', n }, AS_ACME),
          invoke(app.url, 'fetch', { who: 'evil', n }, AS_EVIL),
        ]),
      );

      for (const answer of answers) expect(answer.status).toBe(200);
      const pools = answers.map((answer) => [answer.body.result.who, answer.body.pool]);
      expect(pools.filter(([who]) => who === 'acme').map(([, pool]) => pool)).toEqual(Array(4).fill('normal'));
      expect(pools.filter(([who]) => who === 'evil').map(([, pool]) => pool)).toEqual(Array(4).fill('isolated'));
      expect(up.requests).toHaveLength(8);
      const evilPorts = gate.ports('evil');
      expect(evilPorts.size).toBeGreaterThan(0);
      expect(gate.ports('acme').size).toBeGreaterThan(0);
      for (const port of gate.ports('acme')) expect(evilPorts.has(port)).toBe(false);
    });

    it('lets at most isolatedMaxConcurrency contained calls reach the upstream while normal calls keep theirs', async () => {
      const { app, up } = await setup();
      await contain(app.url, 'evil', { state: 'active', posture: 'degraded' });
      gate = new WhoGate();
      up.use(gate.handler);

      const contained = Array.from({ length: 8 }, (_, n) => invoke(app.url, 'fetch', { who: 'evil', n }, AS_EVIL));
      await eventually(() => expect(gate.inFlight('evil')).toBe(2));
      const normal = Array.from({ length: 6 }, (_, n) => invoke(app.url, 'fetch', { who: 'acme', n }, AS_ACME));

      // The normal tenant's six reach the upstream at once while six contained calls still wait.
      await eventually(() => expect(gate.inFlight('acme')).toBe(6));
      expect(gate.inFlight('evil')).toBe(2);
      const { prom } = await scrape(app.url);
      expect(poolGauge(prom, 'active', 'isolated')).toBe(2);
      expect(poolGauge(prom, 'active', 'normal')).toBe(6);

      gate.releaseAll();
      const answers = await Promise.all([...contained, ...normal]);

      for (const answer of answers) expect(answer.status).toBe(200);
      expect(answers.slice(0, 8).map((answer) => answer.body.pool)).toEqual(Array(8).fill('isolated'));
      expect(answers.slice(8).map((answer) => answer.body.pool)).toEqual(Array(6).fill('normal'));
      expect(gate.peak('evil')).toBe(2);
      expect(gate.peak('acme')).toBe(6);
      const after = (await scrape(app.url)).prom;
      expect(poolGauge(after, 'peak', 'isolated')).toBe(2);
      expect(poolGauge(after, 'peak', 'normal')).toBe(6);
      expect(poolGauge(after, 'active', 'isolated')).toBe(0);
    });
  });

  describe('routing by snapshot', () => {
    it.each<[string, string, Record<string, string>, Record<string, unknown> | undefined, 'normal' | 'isolated']>([
      ['an anonymous caller', 'anonymous', ANONYMOUS, undefined, 'isolated'],
      ['a configured tenant never changed (seeded not_contained)', 'acme', AS_ACME, undefined, 'normal'],
      ['a released tenant', 'evil', AS_EVIL, { state: 'released' }, 'normal'],
      ['an indeterminate tenant', 'evil', AS_EVIL, { state: 'indeterminate' }, 'isolated'],
      ['an active tenant under posture degraded', 'evil', AS_EVIL, { state: 'active' }, 'isolated'],
      ['a tenant set back to not_contained', 'evil', AS_EVIL, { state: 'not_contained' }, 'normal'],
    ])('routes %s to its pool', async (_name, tenant, headers, change, pool) => {
      const { app, up } = await setup();
      if (change) await contain(app.url, tenant, change);

      const answer = await invoke(app.url, 'fetch', { who: tenant }, headers);

      expect(answer.status).toBe(200);
      expect(answer.body.pool).toBe(pool);
      expect(up.requests).toHaveLength(1);
      const { prom } = await scrape(app.url);
      const other = pool === 'normal' ? 'isolated' : 'normal';
      expect({ used: poolGauge(prom, 'peak', pool), other: poolGauge(prom, 'peak', other) }).toEqual({
        used: 1,
        other: 0,
      });
    });

    it('applies a containment change to the next call, not to the call already running', async () => {
      const { app, up } = await setup();
      gate = new WhoGate();
      up.use(gate.handler);

      const running = invoke(app.url, 'fetch', { who: 'before' }, AS_ACME);
      await eventually(() => expect(gate.heldCount).toBe(1));
      await contain(app.url, 'acme', { state: 'active', posture: 'degraded' });
      const next = invoke(app.url, 'fetch', { who: 'after' }, AS_ACME);
      await eventually(() => expect(gate.heldCount).toBe(2));
      gate.releaseAll();

      expect((await running).body.pool).toBe('normal');
      expect((await next).body.pool).toBe('isolated');
      expect([...gate.ports('before')].some((port) => gate.ports('after').has(port))).toBe(false);
    });

    it('keeps a contained call in the isolated pool when the tenant is released while it runs', async () => {
      const { app, up } = await setup();
      await contain(app.url, 'evil', { state: 'active', posture: 'degraded' });
      gate = new WhoGate();
      up.use(gate.handler);

      const running = invoke(app.url, 'fetch', { who: 'before' }, AS_EVIL);
      await eventually(() => expect(gate.heldCount).toBe(1));
      await contain(app.url, 'evil', { state: 'released' });
      const next = invoke(app.url, 'fetch', { who: 'after' }, AS_EVIL);
      await eventually(() => expect(gate.heldCount).toBe(2));
      gate.releaseAll();

      expect((await running).body.pool).toBe('isolated');
      expect((await next).body.pool).toBe('normal');
    });
  });

  describe('posture hard', () => {
    it.each(['active', 'indeterminate'])(
      'refuses every call of a tenant %s under posture hard before anything runs',
      async (state) => {
        const { app, up } = await setup();
        await contain(app.url, 'evil', { state, posture: 'hard' });

        const http = await invoke(app.url, 'fetch', { who: 'evil' }, AS_EVIL);
        const builtin = await invoke(app.url, 'read', { who: 'evil' }, AS_EVIL);
        const company = await send('POST', `${app.url}/test/company`, { json: {}, headers: AS_EVIL });

        for (const answer of [http, builtin, company]) expectEnvelope(answer, 403, 'contained');
        expect(up.requests).toHaveLength(0);
        expect(up.connections).toBe(0);
        expect(companyRuns).toBe(0);
        expect((await getLanes(app.url)).main).toMatchObject({ active: 0, peakActive: 0 });
        // A normal tenant is not affected.
        expect((await invoke(app.url, 'read', { who: 'acme' }, AS_ACME)).status).toBe(200);
        expect((await send('POST', `${app.url}/test/company`, { json: {}, headers: AS_ACME })).status).toBe(200);
        expect(companyRuns).toBe(1);
      },
    );
  });

  describe('a tool with containment: deny', () => {
    it('refuses a contained tenant under posture degraded without calling the upstream', async () => {
      const { app, up } = await setup();
      await contain(app.url, 'evil', { state: 'active', posture: 'degraded' });

      const refused = await invoke(app.url, 'secret', { who: 'evil' }, AS_EVIL);

      expectEnvelope(refused, 403, 'contained');
      expect(up.requests).toHaveLength(0);
      expect(up.connections).toBe(0);
      // The same tenant may still use tools that allow it, in the isolated pool.
      expect((await invoke(app.url, 'fetch', { who: 'evil' }, AS_EVIL)).body.pool).toBe('isolated');
    });

    it('refuses an anonymous caller without calling the upstream', async () => {
      const { app, up } = await setup();

      expectEnvelope(await invoke(app.url, 'secret', { who: 'anonymous' }, ANONYMOUS), 403, 'contained');

      expect(up.requests).toHaveLength(0);
    });

    it('serves a tenant that is not contained', async () => {
      const { app, up } = await setup();

      const answer = await invoke(app.url, 'secret', { who: 'acme' }, AS_ACME);

      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ pool: 'normal', result: { who: 'acme' } });
      expect(up.requests).toHaveLength(1);
    });
  });

  describe('admin routes', () => {
    it('reads the seeded snapshot of a configured tenant', async () => {
      const { app } = await setup();

      const response = await getContainment(app.url, 'acme');

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ tenant: 'acme', state: 'not_contained', posture: 'degraded', version: 1 });
    });

    it('answers each PUT with the new snapshot, its version one higher than the last', async () => {
      const { app } = await setup();

      const first = await putContainment(app.url, 'evil', { state: 'active', posture: 'hard', reason: 'exfil alert' });
      clock.advance(1_500);
      const second = await putContainment(app.url, 'evil', { state: 'indeterminate', posture: 'degraded' });
      const third = await putContainment(app.url, 'evil', { state: 'released', reason: 'cleared' });

      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        tenant: 'evil',
        state: 'active',
        posture: 'hard',
        reason: 'exfil alert',
        version: 2,
        updatedAt: '2026-01-01T00:00:00.000Z',
      });
      expect(second.body).toEqual({
        tenant: 'evil',
        state: 'indeterminate',
        posture: 'degraded',
        reason: '',
        version: 3,
        updatedAt: '2026-01-01T00:00:01.500Z',
      });
      expect(third.body).toMatchObject({ state: 'released', reason: 'cleared', version: 4 });
      expect((await getContainment(app.url, 'evil')).body).toEqual(third.body);
    });

    it('starts a tenant that was never set at version 1, and answers 404 for it before', async () => {
      const { app } = await setup();

      expectEnvelope(await getContainment(app.url, 'ghost'), 404, 'not_found');
      const first = await putContainment(app.url, 'ghost', { state: 'active' });
      const second = await putContainment(app.url, 'ghost', { state: 'active' });

      expect([first.body.version, second.body.version]).toEqual([1, 2]);
      expect((await getContainment(app.url, 'ghost')).body).toMatchObject({ tenant: 'ghost', version: 2 });
    });

    it('takes containment.defaultPosture when a PUT names no posture', async () => {
      const { app, up } = await setup({ defaultPosture: 'hard' });

      const snapshot = await contain(app.url, 'evil', { state: 'active' });

      expect(snapshot.posture).toBe('hard');
      expectEnvelope(await invoke(app.url, 'fetch', { who: 'evil' }, AS_EVIL), 403, 'contained');
      expect(up.requests).toHaveLength(0);
    });

    it('takes posture degraded when neither the PUT nor the config names one', async () => {
      const { app } = await setup();

      expect((await contain(app.url, 'evil', { state: 'active' })).posture).toBe('degraded');
    });

    it('accepts a reason of exactly 500 characters', async () => {
      const { app } = await setup();

      expect((await contain(app.url, 'evil', { state: 'active', reason: 'r'.repeat(500) })).reason).toHaveLength(500);
    });

    it.each<[string, string, unknown]>([
      ['an unknown state', 'evil', { state: 'quarantined' }],
      ['a missing state', 'evil', { posture: 'hard' }],
      ['an unknown posture', 'evil', { state: 'active', posture: 'soft' }],
      ['an extra key', 'evil', { state: 'active', tenant: 'acme' }],
      ['a reason over 500 characters', 'evil', { state: 'active', reason: 'r'.repeat(501) }],
      ['a reason that is not a string', 'evil', { state: 'active', reason: 42 }],
      ['a body that is an array', 'evil', [{ state: 'active' }]],
      ['a body that is a string', 'evil', 'active'],
      ['the tenant anonymous', 'anonymous', { state: 'released' }],
      ['a tenant name with a space', 'bad%20name', { state: 'active' }],
      ['a tenant name starting with a dash', '-evil', { state: 'active' }],
      ['a tenant name over 64 characters', 't'.repeat(65), { state: 'active' }],
    ])('refuses %s with 400 invalid_request and changes nothing', async (_name, tenant, body) => {
      const { app } = await setup();

      const response = await putContainment(app.url, tenant, body);

      expectEnvelope(response, 400, 'invalid_request');
      expectNothingLeaked(response, ADMIN_TOKEN);
      expect((await getContainment(app.url, 'evil')).body).toMatchObject({ state: 'not_contained', version: 1 });
    });

    it('refuses to read the tenant anonymous with 400', async () => {
      const { app } = await setup();

      expectEnvelope(await getContainment(app.url, 'anonymous'), 400, 'invalid_request');
    });

    it.each<[string, Record<string, string>]>([
      ['no token', {}],
      ['a wrong token', { authorization: 'Bearer admin-token-0123456789abcdeX' }],
      ['a token that is not a Bearer token', { authorization: ADMIN_TOKEN }],
      ['a tenant’s API key', AS_ACME],
    ])('answers 401 to %s, on GET and PUT, and changes nothing', async (_name, headers) => {
      const { app } = await setup();

      const read = await getContainment(app.url, 'evil', headers);
      const write = await putContainment(app.url, 'evil', { state: 'released' }, headers);

      for (const response of [read, write]) {
        expectEnvelope(response, 401, 'unauthorized');
        expectNothingLeaked(response, ADMIN_TOKEN, ACME.key);
      }
      expect((await getContainment(app.url, 'evil')).body).toMatchObject({ state: 'not_contained', version: 1 });
    });

    it('answers 404 on the admin routes when no admin token is configured', async () => {
      const up = await upstream();
      const document = config(up.url('/tool'));
      const app = await service({ ...document, auth: { ...(document.auth as object), adminToken: undefined } });

      for (const response of [
        await getContainment(app.url, 'acme'),
        await putContainment(app.url, 'evil', { state: 'active' }),
        await putContainment(app.url, 'evil', { state: 'active' }, {}),
      ]) {
        expectEnvelope(response, 404, 'not_found');
      }
      expect((await invoke(app.url, 'fetch', { who: 'evil' }, AS_EVIL)).body.pool).toBe('normal');
    });
  });

  describe('ledger and secrecy', () => {
    it('records a change as an event the tenant sees in its own GET /v1/events', async () => {
      const { app } = await setup();

      await contain(app.url, 'evil', { state: 'active', posture: 'degraded', reason: 'exfil alert 7731' });

      const seen = await getEvents(app.url, undefined, AS_EVIL);
      const change = seen.filter((event) => event.status === 'containment_active');
      expect(change).toEqual([
        {
          at: '2026-01-01T00:00:00.000Z',
          callId: '',
          toolId: 'admin',
          lane: '',
          tenant: 'evil',
          status: 'containment_active',
        },
      ]);
      expect(JSON.stringify(seen)).not.toContain('exfil alert 7731');
      // Another tenant does not see it.
      const others = [...(await getEvents(app.url, undefined, AS_ACME)), ...(await getEvents(app.url))];
      expect(others.filter((event) => event.status.startsWith('containment_'))).toEqual([]);
    });

    it('never shows the admin token in events, metrics or error bodies', async () => {
      const { app } = await setup();
      const answers: Response[] = [
        await putContainment(app.url, 'evil', { state: 'active', reason: 'x'.repeat(501) }),
        await putContainment(app.url, 'anonymous', { state: 'active' }),
        await getContainment(app.url, 'ghost'),
        await putContainment(app.url, 'evil', { state: 'bogus' }, { authorization: `Bearer ${ADMIN_TOKEN}x` }),
        await putContainment(app.url, 'evil', { state: 'active', posture: 'hard' }),
        await invoke(app.url, 'fetch', { who: 'evil' }, AS_EVIL),
        await send('PUT', `${app.url}/v1/admin/containment/evil`, {
          raw: '{"state":',
          headers: { ...AS_ADMIN, 'content-type': 'application/json' },
        }),
      ];
      await contain(app.url, 'evil', { state: 'released' });

      expect(answers.map((answer) => answer.status)).toEqual([400, 400, 404, 401, 200, 403, 400]);
      for (const answer of answers) expectNothingLeaked(answer, ADMIN_TOKEN);
      const events = [
        ...(await getEvents(app.url, undefined, AS_EVIL)),
        ...(await getEvents(app.url, undefined, AS_ACME)),
        ...(await getEvents(app.url)),
      ];
      expect(events.map((event) => event.status)).toEqual(
        expect.arrayContaining(['containment_active', 'containment_released']),
      );
      expect(JSON.stringify(events)).not.toContain(ADMIN_TOKEN);
      expect((await scrape(app.url)).text).not.toContain(ADMIN_TOKEN);
    });
  });

  describe('metrics', () => {
    it('counts every routing decision by pool and reason', async () => {
      const { app } = await setup();
      const before = (await scrape(app.url)).prom;

      await invoke(app.url, 'read', {}, ANONYMOUS);
      await invoke(app.url, 'read', {}, ANONYMOUS);
      for (let n = 0; n < 3; n++) await invoke(app.url, 'read', {}, AS_ACME);
      await contain(app.url, 'evil', { state: 'active', posture: 'degraded' });
      await invoke(app.url, 'read', {}, AS_EVIL);
      await contain(app.url, 'evil', { state: 'indeterminate', posture: 'degraded' });
      await invoke(app.url, 'read', {}, AS_EVIL);
      await contain(app.url, 'evil', { state: 'active', posture: 'hard' });
      expectEnvelope(await invoke(app.url, 'read', {}, AS_EVIL), 403, 'contained');
      expectEnvelope(await invoke(app.url, 'read', {}, AS_EVIL), 403, 'contained');
      await contain(app.url, 'evil', { state: 'released' });
      await invoke(app.url, 'read', {}, AS_EVIL);

      const after = (await scrape(app.url)).prom;
      const delta = (pool: string, reason: string) => routes(after, pool, reason) - routes(before, pool, reason);
      expect({
        anonymous: delta('isolated', 'anonymous'),
        notContained: delta('normal', 'not_contained'),
        active: delta('isolated', 'active'),
        indeterminate: delta('isolated', 'indeterminate'),
        denied: delta('denied', 'active'),
        released: delta('normal', 'released'),
      }).toEqual({ anonymous: 2, notContained: 3, active: 1, indeterminate: 1, denied: 2, released: 1 });
      const pools = new Set(
        after.samples.filter((s) => s.name === 'bulkhead_containment_routes_total').map((s) => s.labels.pool),
      );
      for (const pool of pools) expect(['normal', 'isolated', 'denied']).toContain(pool);
    });
  });

  describe('egress', () => {
    it('refuses a loopback upstream with 403 egress_denied when no private CIDR is allowed', async () => {
      const { app, up } = await setup({ egress: { allowHosts: ['*'], allowPrivateCidrs: [] } });

      for (const headers of [AS_ACME, AS_EVIL, ANONYMOUS]) {
        const refused = await invoke(app.url, 'fetch', { who: 'x' }, headers);

        const error = expectEnvelope(refused, 403, 'egress_denied');
        expect(error.jsonrpcCode).toBe(-32013);
        // The host as the config wrote it and what to configure; never its port, path or URL.
        expect(error.message).toContain("host '127.0.0.1'");
        expect(error.message).toContain('containment.egress.allowPrivateCidrs');
        expectNothingLeaked(refused, String(up.port), up.url('/tool'));
      }
      expect(up.connections).toBe(0);
      expect(up.requests).toHaveLength(0);
    });
  });
});
