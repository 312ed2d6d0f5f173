import { createTestApp, type TestApp } from '../support/create-app';
import { invoke, type Response, send } from '../support/http-client';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { Upstream } from '../support/upstream';
import { failsWhenAsked, lookupTool } from '../support/shared-breaker';

const ALPHA = testTenant('alpha');
const BRAVO = testTenant('bravo');
const ANONYMOUS = { tenant: 'anonymous', headers: {} as Record<string, string> };

type Circuits = Record<string, { state: string; tenantsOpen: Array<{ tenant: string; retryAfterMs: number }> }>;
type Events = Array<{ toolId: string; tenant: string; status: string }>;

/**
 * What `GET /v1/circuits` and `GET /v1/events` show a tenant: what it may use and itself, never
 * another tenant (issue 36, 8). `lookup` is every tenant's and refuses alpha alone; `solo` is an
 * LLM route kept for alpha, whose failing target opens its breaker; `vault` refuses contained
 * callers, anonymous ones always. Operators see it all through the admin routes.
 */
describe('what a tenant sees of shared breakers and events', () => {
  let upstream: Upstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await Upstream.start(failsWhenAsked);
    app = await createTestApp({
      auth: { apiKeys: [ALPHA.apiKey, BRAVO.apiKey], adminToken: ADMIN_TOKEN },
      lanes: { main: { concurrency: 4, queueCapacity: 4 }, llm: { concurrency: 4, queueCapacity: 4 } },
      tools: {
        lookup: lookupTool(upstream.url('/lookup')),
        vault: { lane: 'main', kind: 'builtin', builtin: 'echo', containment: 'deny' },
      },
      llm: {
        routes: {
          solo: {
            lane: 'llm',
            tenants: ['alpha'],
            retry: { maxAttempts: 1 },
            breaker: { volumeThreshold: 2, errorThresholdPercentage: 50, resetTimeoutMs: 30_000 },
            targets: [{ provider: 'fake', model: 'down', script: [{ status: 503 }] }],
          },
        },
      },
    });

    // Bravo's calls succeed and alpha's fail: the breaker refuses alpha alone.
    for (let i = 0; i < 3; i++) expect((await invoke(app.url, 'lookup', { q: i }, BRAVO.headers)).status).toBe(200);
    for (let i = 0; i < 8; i++) await invoke(app.url, 'lookup', { explode: true }, ALPHA.headers);
    expect((await invoke(app.url, 'lookup', { q: 'fine' }, ALPHA.headers)).body.error.kind).toBe('circuit_open');
    // Alpha's own route fails (502) until its breaker opens (503).
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await send('POST', `${app.url}/v1/chat/completions`, {
        json: { model: 'solo', messages: [{ role: 'user', content: 'hello' }] },
        headers: ALPHA.headers,
      });
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([502, 502, 503]);
  });

  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  const ok = (response: Response): Response => {
    expect(response.status).toBe(200);
    return response;
  };
  const circuitsOf = async (headers: Record<string, string>): Promise<Circuits> =>
    ok(await send('GET', `${app.url}/v1/circuits`, { headers })).body.circuits;
  const eventsOf = async (headers: Record<string, string>): Promise<Events> =>
    ok(await send('GET', `${app.url}/v1/events?limit=1000`, { headers })).body.events;

  describe('GET /v1/circuits', () => {
    it('shows a tenant refused on its own itself, and the breaker of its own route', async () => {
      const circuits = await circuitsOf(ALPHA.headers);

      expect(Object.keys(circuits).sort()).toEqual(['llm.solo.0', 'lookup', 'vault']);
      expect(circuits.lookup).toMatchObject({ state: 'closed', tenantsOpen: [{ tenant: 'alpha' }] });
      expect(circuits.lookup.tenantsOpen[0].retryAfterMs).toBeGreaterThan(0);
      expect(circuits['llm.solo.0'].state).toBe('open');
    });

    it.each([
      ['bravo', BRAVO, ['lookup', 'vault']],
      ['an anonymous caller', ANONYMOUS, ['lookup']],
    ])('shows %s neither alpha nor the route kept for it', async (_who, caller, names) => {
      const circuits = await circuitsOf(caller.headers);

      expect(Object.keys(circuits).sort()).toEqual(names);
      expect(circuits.lookup).toMatchObject({ state: 'closed', tenantsOpen: [] });
      expect(JSON.stringify(circuits)).not.toMatch(/alpha|solo/);
    });

    it('shows the operators every breaker and every tenant refused on its own', async () => {
      const circuits = (await send('GET', `${app.url}/v1/admin/circuits`, { headers: AS_ADMIN })).body.circuits;

      expect(Object.keys(circuits).sort()).toEqual(['llm.solo.0', 'lookup', 'vault']);
      expect(circuits.lookup.tenantsOpen).toEqual([{ tenant: 'alpha', retryAfterMs: expect.any(Number) }]);
    });

    it('keeps the full view behind the admin token: an API key is refused there', async () => {
      const refused = await send('GET', `${app.url}/v1/admin/circuits`, { headers: ALPHA.headers });

      expect(refused.status).toBe(401);
      expect(refused.body.error.kind).toBe('unauthorized');
    });
  });

  describe('GET /v1/events', () => {
    it("shows a tenant its own calls and its own route's breaker opening", async () => {
      const events = await eventsOf(ALPHA.headers);

      expect(new Set(events.map((event) => event.tenant))).toEqual(new Set(['alpha', '']));
      expect(events).toContainEqual(expect.objectContaining({ toolId: 'llm.solo.0', status: 'breaker_open' }));
      expect(events.filter((event) => event.toolId === 'llm.solo')).toHaveLength(3);
    });

    it('shows another tenant only its own calls: no transition of a route kept for alpha', async () => {
      const events = await eventsOf(BRAVO.headers);

      expect(events.map((event) => [event.toolId, event.tenant, event.status])).toEqual([
        ['lookup', 'bravo', 'ok'],
        ['lookup', 'bravo', 'ok'],
        ['lookup', 'bravo', 'ok'],
      ]);
      expect(JSON.stringify(await eventsOf(ANONYMOUS.headers))).not.toMatch(/alpha|solo/);
    });

    it('shows every tenant the transitions of a breaker it may use', async () => {
      ok(await send('POST', `${app.url}/v1/admin/circuits/lookup/open`, { headers: AS_ADMIN }));
      try {
        for (const caller of [ALPHA, BRAVO, ANONYMOUS]) {
          expect(await eventsOf(caller.headers)).toContainEqual(
            expect.objectContaining({ toolId: 'lookup', tenant: '', status: 'breaker_open' }),
          );
        }
      } finally {
        ok(await send('POST', `${app.url}/v1/admin/circuits/lookup/close`, { headers: AS_ADMIN }));
      }
    });

    it('shows the operators every tenant’s events and every transition', async () => {
      const response = await send('GET', `${app.url}/v1/admin/events?limit=1000`, { headers: AS_ADMIN });

      const events = ok(response).body.events as Events;
      expect(new Set(events.map((event) => event.tenant))).toEqual(new Set(['alpha', 'bravo', '']));
      expect(events).toContainEqual(expect.objectContaining({ toolId: 'llm.solo.0', status: 'breaker_open' }));
      expect((await send('GET', `${app.url}/v1/admin/events`, { headers: BRAVO.headers })).status).toBe(401);
    });
  });

  describe('GET /v1/lanes', () => {
    const lanesOf = async (headers: Record<string, string>): Promise<string[]> =>
      Object.keys(ok(await send('GET', `${app.url}/v1/lanes`, { headers })).body.lanes).sort();

    it('shows the lane only a route kept for alpha runs in to alpha alone: its counts are alpha’s traffic', async () => {
      expect(await lanesOf(ALPHA.headers)).toEqual(['llm', 'main']);
      expect(await lanesOf(BRAVO.headers)).toEqual(['main']);
      expect(await lanesOf(ANONYMOUS.headers)).toEqual(['main']);
    });
  });
});
