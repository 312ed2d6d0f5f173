import { createHash } from 'node:crypto';
import { Controller, Get, Module } from '@nestjs/common';
import { FakeClock } from '../../src/common/fake-clock';
import { Bulkhead } from '../../src/route-policies';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { expectEnvelope, expectNothingLeaked } from '../support/envelope';
import { invoke, type Response, send } from '../support/http-client';
import { type EventView, getEvents } from '../support/service-reads';
import { Upstream } from '../support/upstream';

const ACME_KEY = 'acme-key-0123456789abcdef';
const BETA_KEY = 'beta-key-fedcba9876543210';
const ADMIN_TOKEN = 'admin-token-0123456789abcdef';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
const AS_ACME = bearer(ACME_KEY);
const AS_BETA = bearer(BETA_KEY);
const AS_ADMIN = bearer(ADMIN_TOKEN);

/** Times the company route's handler ran. */
const companyRuns = { report: 0 };

/** A company's own route: it must get the same identity check as the tool routes. */
@Controller('test/company')
class CompanyController {
  @Get('report')
  @Bulkhead('main')
  report() {
    companyRuns.report++;
    return { ok: true };
  }
}

@Module({ controllers: [CompanyController] })
class CompanyModule {}

/**
 * Two configured tenants (acme, beta), an admin token, an http tool `fetch` on the upstream, a
 * builtin `read`, and a named breaker that the admin route can open.
 */
function config(allowAnonymous: boolean, upstreamUrl: string): Record<string, unknown> {
  return {
    auth: {
      allowAnonymous,
      adminToken: ADMIN_TOKEN,
      apiKeys: [
        { sha256: sha256(ACME_KEY), tenant: 'acme' },
        { sha256: sha256(BETA_KEY), tenant: 'beta' },
      ],
    },
    lanes: { main: { concurrency: 8, queueCapacity: 8 } },
    tools: {
      fetch: { lane: 'main', kind: 'http', url: upstreamUrl, retry: { maxAttempts: 1 } },
      read: { lane: 'main', kind: 'builtin', builtin: 'echo' },
    },
    breakers: { 'billing-api': { volumeThreshold: 5 } },
  };
}

const byCallId = (a: { callId: string }, b: { callId: string }) => a.callId.localeCompare(b.callId);

/** Every tenant route of the service and of a company module, as one request each. */
const TENANT_ROUTES: Array<[string, string, unknown]> = [
  ['POST', '/v1/tools/fetch/invoke', { arguments: {} }],
  ['POST', '/v1/tools/batch', { calls: [{ toolId: 'fetch', arguments: {} }] }],
  // Every row has a body (none for a GET): a shorter row would make jest pass `done` as the third argument.
  ['GET', '/v1/lanes', undefined],
  ['GET', '/v1/circuits', undefined],
  ['GET', '/v1/events', undefined],
  ['GET', '/test/company/report', undefined],
];

describe.each(PLATFORMS)('identity over HTTP, on %s', (platform) => {
  let clock: FakeClock;
  let upstream: Upstream;
  let current: TestApp | undefined;
  let url: string;

  const start = async (allowAnonymous: boolean): Promise<void> => {
    current = await createTestApp(config(allowAnonymous, upstream.url('/fetch')), {
      platform,
      clock,
      imports: [CompanyModule],
    });
    url = current.url;
  };

  const request = (method: string, path: string, headers: Record<string, string> = {}, json?: unknown) =>
    send(method, `${url}${path}`, { headers, json });

  /** The ledger line of `callId` as the caller with `headers` sees the ledger. */
  const eventSeenBy = async (callId: string, headers?: Record<string, string>): Promise<EventView | undefined> =>
    (await getEvents(url, 1000, headers)).find((event) => event.callId === callId);

  beforeEach(async () => {
    clock = new FakeClock();
    upstream = await Upstream.start();
    companyRuns.report = 0;
  });

  afterEach(async () => {
    await upstream.close();
    await closeOnFakeClock(current, clock);
    current = undefined;
  });

  describe('with keys required (allowAnonymous: false)', () => {
    beforeEach(() => start(false));

    it.each(TENANT_ROUTES)('answers %s %s without a key with 401 unauthorized', async (method, path, body) => {
      const response = await request(method, path, {}, body);

      expectEnvelope(response, 401, 'unauthorized');
      expect(upstream.requests).toHaveLength(0);
      expect(companyRuns.report).toBe(0);
    });

    it.each(['/health/live', '/health/ready', '/metrics'])('serves GET %s without a key', async (path) => {
      const response = await request('GET', path);

      expect(response.status).toBe(200);
    });

    it('runs a call with a valid key as its tenant in the normal pool, and the ledger says so', async () => {
      const response = await invoke(url, 'fetch', { q: 1 }, { ...AS_ACME, 'x-call-id': 'acme-1' });

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ callId: 'acme-1', toolId: 'fetch', pool: 'normal', result: { ok: true } });
      expect(upstream.requests).toHaveLength(1);
      expect(await eventSeenBy('acme-1', AS_ACME)).toMatchObject({ tenant: 'acme', toolId: 'fetch', status: 'ok' });
    });

    it('runs every call of a batch as the key’s tenant', async () => {
      const response = await request('POST', '/v1/tools/batch', AS_BETA, {
        calls: [
          { toolId: 'read', arguments: { n: 0 }, callId: 'beta-b0' },
          { toolId: 'fetch', arguments: { n: 1 }, callId: 'beta-b1' },
        ],
      });

      expect(response.status).toBe(200);
      expect(response.body.results.map((result: { pool: string }) => result.pool)).toEqual(['normal', 'normal']);
      const events = (await getEvents(url, 1000, AS_BETA)).filter((event) => event.callId.startsWith('beta-b'));
      expect(events.map(({ callId, tenant, status }) => ({ callId, tenant, status })).sort(byCallId)).toEqual([
        { callId: 'beta-b0', tenant: 'beta', status: 'ok' },
        { callId: 'beta-b1', tenant: 'beta', status: 'ok' },
      ]);
    });

    it.each([
      ['GET', '/v1/lanes'],
      ['GET', '/v1/circuits'],
      ['GET', '/v1/events'],
      ['GET', '/test/company/report'],
    ])('answers %s %s with a valid key', async (method, path) => {
      const response = await request(method, path, AS_ACME);

      expect(response.status).toBe(200);
    });

    it('runs the company route once per authenticated request', async () => {
      expect((await request('GET', '/test/company/report', AS_ACME)).body).toEqual({ ok: true });
      expectEnvelope(await request('GET', '/test/company/report'), 401, 'unauthorized');

      expect(companyRuns.report).toBe(1);
    });

    it.each([
      ['an unknown key', { authorization: 'Bearer not-a-configured-key-42' }],
      ['the key without the Bearer scheme', { authorization: ACME_KEY }],
      ['the key under the Basic scheme', { authorization: `Basic ${ACME_KEY}` }],
      ['the key with something after it', { authorization: `Bearer ${ACME_KEY} extra` }],
      ['an empty Bearer', { authorization: 'Bearer ' }],
      ['the configured SHA-256 of a key instead of the key', bearer(sha256(ACME_KEY))],
    ])('answers %s with 401 and runs nothing', async (_label, headers) => {
      const response = await invoke(url, 'fetch', {}, headers);

      expectEnvelope(response, 401, 'unauthorized');
      expect(upstream.requests).toHaveLength(0);
    });

    it('never echoes a presented key, known or not, in the 401 envelope', async () => {
      const unknownKey = 'sk-unknown-0f1e2d3c4b5a69788796a5b4';
      const answers: Array<[Response, string]> = [
        [await invoke(url, 'fetch', {}, bearer(unknownKey)), unknownKey],
        [await request('GET', '/v1/events', bearer(unknownKey)), unknownKey],
        [await request('GET', '/test/company/report', bearer(unknownKey)), unknownKey],
        [await invoke(url, 'fetch', {}, { authorization: `Basic ${ACME_KEY}` }), ACME_KEY],
        [await invoke(url, 'fetch', {}, AS_ADMIN), ADMIN_TOKEN],
        [await request('PUT', '/v1/admin/containment/acme', AS_ACME, { state: 'active' }), ACME_KEY],
      ];

      for (const [response, secret] of answers) {
        expectEnvelope(response, 401, 'unauthorized');
        expectNothingLeaked(response, secret, sha256(secret));
      }
    });

    it('does not accept the admin token as an API key on tenant routes', async () => {
      for (const [method, path, body] of TENANT_ROUTES) {
        expectEnvelope(await request(method, path, AS_ADMIN, body), 401, 'unauthorized');
      }

      expect(upstream.requests).toHaveLength(0);
      expect(companyRuns.report).toBe(0);
    });

    it('does not accept an API key on admin routes, and changes nothing', async () => {
      const before = await request('GET', '/v1/admin/containment/acme', AS_ADMIN);
      expect(before.status).toBe(200);

      expectEnvelope(await request('GET', '/v1/admin/containment/acme', AS_ACME), 401, 'unauthorized');
      expectEnvelope(
        await request('PUT', '/v1/admin/containment/beta', AS_ACME, { state: 'active', posture: 'hard' }),
        401,
        'unauthorized',
      );
      expectEnvelope(await request('POST', '/v1/admin/circuits/billing-api/open', AS_ACME), 401, 'unauthorized');

      expect((await request('GET', '/v1/admin/containment/beta', AS_ADMIN)).body).toMatchObject({
        state: 'not_contained',
      });
      expect((await request('GET', '/v1/admin/containment/acme', AS_ADMIN)).body).toEqual(before.body);
      expect((await request('GET', '/v1/circuits', AS_ACME)).body.circuits['billing-api'].state).toBe('closed');
      expect((await invoke(url, 'read', {}, AS_BETA)).body.pool).toBe('normal');
    });
  });

  describe('with anonymous callers allowed', () => {
    beforeEach(() => start(true));

    it('answers an unknown key with 401 instead of running it as anonymous', async () => {
      const response = await invoke(url, 'fetch', {}, { ...bearer('typo-in-the-key-0123'), 'x-call-id': 'typo' });

      expectEnvelope(response, 401, 'unauthorized');
      expectNothingLeaked(response, 'typo-in-the-key-0123');
      expect(upstream.requests).toHaveLength(0);
      expect(await eventSeenBy('typo')).toBeUndefined();
    });

    it('answers an unknown key with 401 on the batch and read routes too', async () => {
      for (const [method, path, body] of TENANT_ROUTES) {
        expectEnvelope(await request(method, path, bearer('typo-in-the-key-0123'), body), 401, 'unauthorized');
      }
      expect(upstream.requests).toHaveLength(0);
    });

    it.each([
      ['an X-Tenant header', '', { 'x-tenant': 'acme' }, {}],
      ['a Tenant header', '', { tenant: 'acme' }, {}],
      ['an X-Forwarded-User header', '', { 'x-forwarded-user': 'acme' }, {}],
      ['a query string', '?tenant=acme', {}, {}],
      ['a tenant field in the arguments', '', {}, { tenant: 'acme' }],
      ['all of them at once', '?tenant=acme', { 'x-tenant': 'acme', tenant: 'acme' }, { tenant: 'acme' }],
    ])(
      'runs an anonymous caller naming acme in %s as anonymous, in the isolated pool',
      async (_l, query, headers, args) => {
        const response = await send('POST', `${url}/v1/tools/fetch/invoke${query}`, {
          json: { arguments: args },
          headers: { ...headers, 'x-call-id': 'claims-acme' },
        });

        expect(response.status).toBe(200);
        expect(response.body.pool).toBe('isolated');
        expect(await eventSeenBy('claims-acme')).toMatchObject({ tenant: 'anonymous' });
        expect(await eventSeenBy('claims-acme', AS_ACME)).toBeUndefined();
      },
    );

    it('runs a batch entry naming acme in its arguments as the anonymous caller, in the isolated pool', async () => {
      const response = await send('POST', `${url}/v1/tools/batch?tenant=acme`, {
        json: { calls: [{ toolId: 'fetch', arguments: { tenant: 'acme' }, callId: 'batch-claims' }] },
        headers: { 'x-tenant': 'acme' },
      });

      expect(response.status).toBe(200);
      expect(response.body.results[0].pool).toBe('isolated');
      expect(await eventSeenBy('batch-claims')).toMatchObject({ tenant: 'anonymous' });
      expect(await eventSeenBy('batch-claims', AS_ACME)).toBeUndefined();
    });

    it('refuses a tenant field beside the arguments instead of reading it', async () => {
      const response = await send('POST', `${url}/v1/tools/fetch/invoke`, {
        json: { arguments: {}, tenant: 'acme' },
        headers: { 'x-call-id': 'body-tenant' },
      });

      expectEnvelope(response, 400, 'invalid_request');
      expect(upstream.requests).toHaveLength(0);
      expect(await eventSeenBy('body-tenant', AS_ACME)).toBeUndefined();
    });

    it('runs a keyed caller naming another tenant elsewhere as its own tenant', async () => {
      const response = await send('POST', `${url}/v1/tools/fetch/invoke?tenant=acme`, {
        json: { arguments: { tenant: 'acme' } },
        headers: { ...AS_BETA, 'x-tenant': 'acme', 'x-call-id': 'beta-claims' },
      });

      expect(response.status).toBe(200);
      expect(response.body.pool).toBe('normal');
      expect(await eventSeenBy('beta-claims', AS_BETA)).toMatchObject({ tenant: 'beta' });
      expect(await eventSeenBy('beta-claims', AS_ACME)).toBeUndefined();
    });

    it('keeps routing by the key when another tenant, named in a header, is contained', async () => {
      const contained = await request('PUT', '/v1/admin/containment/acme', AS_ADMIN, {
        state: 'active',
        posture: 'hard',
      });
      expect(contained.status).toBe(200);

      const response = await invoke(url, 'read', {}, { ...AS_BETA, 'x-tenant': 'acme' });

      expect(response.status).toBe(200);
      expect(response.body.pool).toBe('normal');
    });
  });

  describe('GET /v1/events', () => {
    beforeEach(() => start(true));

    const callIds = (events: EventView[]) => events.filter((event) => event.callId !== '').map((e) => e.callId);

    it('shows each tenant only its own calls, and breaker transitions to everyone', async () => {
      expect((await invoke(url, 'read', {}, { ...AS_ACME, 'x-call-id': 'acme-call' })).status).toBe(200);
      expect((await invoke(url, 'read', {}, { ...AS_BETA, 'x-call-id': 'beta-call' })).status).toBe(200);
      expect((await invoke(url, 'read', {}, { 'x-call-id': 'anon-call' })).status).toBe(200);
      expect((await request('POST', '/v1/admin/circuits/billing-api/open', AS_ADMIN)).status).toBe(200);

      const seenByAcme = await getEvents(url, 1000, AS_ACME);
      const seenByBeta = await getEvents(url, 1000, AS_BETA);
      const seenByAnonymous = await getEvents(url, 1000);

      expect(callIds(seenByAcme)).toEqual(['acme-call']);
      expect(callIds(seenByBeta)).toEqual(['beta-call']);
      expect(callIds(seenByAnonymous)).toEqual(['anon-call']);
      const breakerOpen = { callId: '', toolId: 'billing-api', lane: '', tenant: '', status: 'breaker_open' };
      for (const seen of [seenByAcme, seenByBeta, seenByAnonymous]) {
        expect(seen).toContainEqual({ at: expect.any(String), ...breakerOpen });
      }
      expect(seenByAcme.every((event) => event.tenant === 'acme' || event.tenant === '')).toBe(true);
      expect(seenByBeta.every((event) => event.tenant === 'beta' || event.tenant === '')).toBe(true);
      expect(seenByAnonymous.every((event) => event.tenant === 'anonymous' || event.tenant === '')).toBe(true);
    });

    it('does not widen the view for a query string or header naming another tenant', async () => {
      expect((await invoke(url, 'read', {}, { ...AS_BETA, 'x-call-id': 'beta-only' })).status).toBe(200);

      for (const path of ['/v1/events?tenant=beta', '/v1/events?limit=1000&tenant=beta']) {
        const asAcme = await request('GET', path, { ...AS_ACME, 'x-tenant': 'beta' });
        const asAnonymous = await request('GET', path, { 'x-tenant': 'beta' });
        expect(asAcme.status).toBe(200);
        expect(asAnonymous.status).toBe(200);
        expect(callIds(asAcme.body.events)).not.toContain('beta-only');
        expect(callIds(asAnonymous.body.events)).not.toContain('beta-only');
      }
    });
  });
});
