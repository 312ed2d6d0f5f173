import { createTestApp, type TestApp } from '../support/create-app';
import { invoke, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { json, Upstream } from '../support/upstream';
import { failsWhenAsked, lookupTool } from '../support/shared-breaker';

const ALPHA = testTenant('alpha');
const BRAVO = testTenant('bravo');
const as = (tenant: { key: string }) => ({ authorization: `Bearer ${tenant.key}` });

describe('a breaker shared by tenants tells one tenant’s failures from the dependency’s', () => {
  let upstream: Upstream;
  let app: TestApp;

  beforeEach(async () => {
    upstream = await Upstream.start(failsWhenAsked);
    app = await createTestApp({
      auth: { apiKeys: [ALPHA.apiKey, BRAVO.apiKey], adminToken: ADMIN_TOKEN },
      lanes: { main: { concurrency: 4, queueCapacity: 4 } },
      tools: {
        lookup: lookupTool(upstream.url('/lookup')),
      },
    });
  });

  afterEach(async () => {
    await app.close();
    await upstream.close();
  });

  /** The operators' view of the breaker. */
  const circuit = async () =>
    ((await send('GET', `${app.url}/v1/admin/circuits`, { headers: AS_ADMIN })).body as any).circuits.lookup;

  it('refuses only the tenant whose arguments make the upstream fail; the others keep being served', async () => {
    for (let i = 0; i < 3; i++) expect((await invoke(app.url, 'lookup', { q: i }, as(BRAVO))).status).toBe(200);
    const alphaStatuses: number[] = [];
    for (let i = 0; i < 8; i++)
      alphaStatuses.push((await invoke(app.url, 'lookup', { explode: true }, as(ALPHA))).status);

    // Alpha's failures reached the upstream until they were found to be its own, then it was refused.
    expect(alphaStatuses.slice(0, 4)).toEqual([502, 502, 502, 502]);
    expect(alphaStatuses.slice(4)).toEqual([503, 503, 503, 503]);
    const refused = await invoke(app.url, 'lookup', { q: 'fine' }, as(ALPHA));
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ kind: 'circuit_open' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) expect((await invoke(app.url, 'lookup', { q: i }, as(BRAVO))).status).toBe(200);
    expect(await circuit()).toMatchObject({ state: 'closed', tenantsOpen: [{ tenant: 'alpha' }] });
    const metrics = parsePromText((await send('GET', `${app.url}/metrics`)).body as string);
    expect(sampleValue(metrics, 'bulkhead_circuit_tenants_open', { breaker: 'lookup' })).toBe(1);
    expect(sampleValue(metrics, 'bulkhead_circuit_tenant_opens_total', { breaker: 'lookup' })).toBe(1);
    expect(sampleValue(metrics, 'bulkhead_circuit_state', { breaker: 'lookup' })).toBe(0);
  });

  it('opens for everyone when every tenant’s calls fail', async () => {
    upstream.use(json(500, { error: 'down' }));
    await invoke(app.url, 'lookup', { q: 1 }, as(BRAVO));
    for (let i = 0; i < 4; i++) {
      await invoke(app.url, 'lookup', { q: i }, as(ALPHA));
      await invoke(app.url, 'lookup', { q: i }, as(BRAVO));
    }

    expect(await circuit()).toMatchObject({ state: 'open', tenantsOpen: [] });
    upstream.use(json(200, { ok: true }));
    expect((await invoke(app.url, 'lookup', { q: 'again' }, as(BRAVO))).status).toBe(503);
  });
});
