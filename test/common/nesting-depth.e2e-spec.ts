import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope, expectNothingLeaked } from '../support/envelope';
import { type Response, send } from '../support/http-client';
import { openaiAnswer } from '../support/llm-answers';
import { getEvents, getLanes } from '../support/service-reads';
import { testTenant } from '../support/tenants';
import { json, Upstream } from '../support/upstream';

const ACME = testTenant('acme');

/** The limit the contract states (docs/http-contract.md section 3), copied rather than imported. */
const LIMIT = 64;

/** A body nested 10,000 levels deep fits in 60 KB; recursive code overflows the stack on it. */
const DEEP = 10_000;

/** `depth` objects inside one another, `{"a":{"a":...{}}}`: a value of exactly that depth. */
function nestedObjects(depth: number): string {
  return `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
}

/** `depth` arrays inside one another: two bytes a level, the most depth a body limit allows. */
function nestedArrays(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

/**
 * Each JSON route, with a body that holds `value` where the route reads it, and how many
 * objects and arrays of the body enclose that value.
 */
const ROUTES = {
  'POST /v1/tools/echo/invoke': {
    path: '/v1/tools/echo/invoke',
    levelsAbove: 2,
    body: (value: string) => `{"arguments":{"a":${value}}}`,
  },
  'POST /v1/tools/fetch/invoke': {
    path: '/v1/tools/fetch/invoke',
    levelsAbove: 2,
    body: (value: string) => `{"arguments":{"a":${value}}}`,
  },
  'POST /v1/tools/batch': {
    path: '/v1/tools/batch',
    levelsAbove: 4,
    body: (value: string) => `{"calls":[{"toolId":"fetch","arguments":{"a":${value}}}]}`,
  },
  'POST /v1/chat/completions': {
    path: '/v1/chat/completions',
    levelsAbove: 1,
    body: (value: string) => `{"model":"chat","messages":[{"role":"user","content":"hi"}],"metadata":${value}}`,
  },
  'POST /v1/examples/reports/render': {
    path: '/v1/examples/reports/render',
    levelsAbove: 1,
    body: (value: string) => `{"ms":0,"a":${value}}`,
  },
} as const;

type RouteName = keyof typeof ROUTES;
const ROUTE_NAMES = Object.keys(ROUTES) as RouteName[];

/** A body of exactly `depth` levels in all, for the route. */
function bodyOfDepth(route: RouteName, depth: number): string {
  const { body, levelsAbove } = ROUTES[route];
  return body(nestedObjects(depth - levelsAbove));
}

/**
 * Bodies nested deeper than the limit are refused where they are parsed, once, for every route
 * that takes JSON: before a guard, a lane, an idempotency claim, a breaker or a tool sees them.
 */
describe('request bodies nested deeper than the limit', () => {
  let service: TestApp;
  let tools: Upstream;
  let models: Upstream;

  const post = (path: string, raw: string, headers: Record<string, string> = {}): Promise<Response> =>
    send('POST', `${service.url}${path}`, {
      raw,
      headers: { 'content-type': 'application/json', ...ACME.headers, ...headers },
    });

  beforeEach(async () => {
    tools = await Upstream.start(json(200, { ok: true }));
    models = await Upstream.start(json(200, openaiAnswer('from the model')));
    service = await createTestApp({
      auth: { apiKeys: [ACME.apiKey] },
      lanes: {
        main: { concurrency: 4, queueCapacity: 4 },
        llm: { concurrency: 4, queueCapacity: 4 },
        render: { concurrency: 1, queueCapacity: 1 },
        general: { concurrency: 1, queueCapacity: 1 },
      },
      tools: {
        echo: { lane: 'main', kind: 'builtin', builtin: 'echo' },
        fetch: { lane: 'main', kind: 'http', url: tools.url('/fetch') },
      },
      llm: {
        routes: {
          chat: { lane: 'llm', targets: [{ provider: 'openai', model: 'gpt-test', baseUrl: models.url('/v1') }] },
        },
      },
      examples: true,
    });
  });

  afterEach(async () => {
    await service.close();
    await tools.close();
    await models.close();
  });

  /** No lane ran anything, no breaker counted anything, the ledger is empty, no upstream was called. */
  async function expectNothingRan(): Promise<void> {
    for (const [name, lane] of Object.entries(await getLanes(service.url))) {
      expect({ name, active: lane.active, waiting: lane.waiting, peakActive: lane.peakActive }).toEqual({
        name,
        active: 0,
        waiting: 0,
        peakActive: 0,
      });
    }
    const circuits = (await send('GET', `${service.url}/v1/circuits`, { headers: ACME.headers })).body
      .circuits as Record<string, { state: string; failures: number; successes: number }>;
    for (const [name, circuit] of Object.entries(circuits)) {
      expect({ name, ...circuit }).toEqual({ name, state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
    }
    expect(await getEvents(service.url, 1000, ACME.headers)).toEqual([]);
    expect(tools.requests).toHaveLength(0);
    expect(models.requests).toHaveLength(0);
  }

  it.each(ROUTE_NAMES)(
    'refuses a 10,000-level body to %s with 400 invalid_request before anything runs',
    async (route) => {
      const raw = ROUTES[route].body(nestedObjects(DEEP));
      expect(raw.length).toBeLessThan(service.config.server.bodyLimitBytes);

      const response = await post(ROUTES[route].path, raw, { 'x-call-id': 'deep-1' });

      const error = expectEnvelope(response, 400, 'invalid_request');
      expect(error).toEqual({
        kind: 'invalid_request',
        message: `request body is nested deeper than ${LIMIT} levels`,
        attempts: 0,
        jsonrpcCode: -32600,
      });
      expectNothingLeaked(response, '{"a":{"a"', 'FST_');
      await expectNothingRan();
    },
  );

  it.each(ROUTE_NAMES)('refuses a body of arrays nested 10,000 deep to %s the same way', async (route) => {
    const response = await post(ROUTES[route].path, ROUTES[route].body(nestedArrays(DEEP)));

    expectEnvelope(response, 400, 'invalid_request');
    await expectNothingRan();
  });

  it.each(ROUTE_NAMES)(`refuses a body of ${LIMIT + 1} levels, one over the limit, to %s`, async (route) => {
    const response = await post(ROUTES[route].path, bodyOfDepth(route, LIMIT + 1));

    expect(expectEnvelope(response, 400, 'invalid_request').message).toBe(
      `request body is nested deeper than ${LIMIT} levels`,
    );
    await expectNothingRan();
  });

  it.each(ROUTE_NAMES)(`serves a body of exactly ${LIMIT} levels to %s`, async (route) => {
    const response = await post(ROUTES[route].path, bodyOfDepth(route, LIMIT));

    expect(response.status).toBe(200);
  });

  it(`echoes arguments at the limit unchanged`, async () => {
    const args = `{"a":${nestedArrays(LIMIT - 2)}}`;

    const response = await post('/v1/tools/echo/invoke', `{"arguments":${args}}`);

    expect(response.status).toBe(200);
    expect(response.body.result).toEqual(JSON.parse(args));
  });

  it('sends an http tool arguments at the limit, alone and in a batch', async () => {
    const invoked = await post('/v1/tools/fetch/invoke', bodyOfDepth('POST /v1/tools/fetch/invoke', LIMIT));
    const batched = await post('/v1/tools/batch', bodyOfDepth('POST /v1/tools/batch', LIMIT));

    expect(invoked.status).toBe(200);
    expect(batched.status).toBe(200);
    expect(batched.body.results[0]).toMatchObject({ toolId: 'fetch', attempts: 1, result: { ok: true } });
    expect(tools.requests.map((request) => JSON.parse(request.body) as unknown)).toEqual([
      { a: JSON.parse(nestedObjects(LIMIT - 2)) },
      { a: JSON.parse(nestedObjects(LIMIT - 4)) },
    ]);
  });

  it('takes no idempotency claim for a refused body: the same key then runs the call', async () => {
    const key = { 'idempotency-key': 'deep-key-1' };

    const refused = await post(
      '/v1/tools/fetch/invoke',
      ROUTES['POST /v1/tools/fetch/invoke'].body(nestedObjects(DEEP)),
      key,
    );
    const first = await post('/v1/tools/fetch/invoke', '{"arguments":{"n":1}}', key);

    expectEnvelope(refused, 400, 'invalid_request');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ replayed: false, attempts: 1, result: { ok: true } });
    expect(tools.requests).toHaveLength(1);
  });

  it('measures depth, not size: a wide body of many shallow values is served', async () => {
    const siblings = Array.from({ length: 5_000 }, (_, n) => `{"n":[${n}]}`).join(',');

    const response = await post('/v1/tools/echo/invoke', `{"arguments":{"items":[${siblings}]}}`);

    expect(response.status).toBe(200);
    expect(response.body.result.items).toHaveLength(5_000);
  });

  it('does not count brackets inside strings as nesting', async () => {
    const text = `${'[{'.repeat(500)}"\\"[{`;

    const response = await post('/v1/tools/echo/invoke', JSON.stringify({ arguments: { text } }));

    expect(response.status).toBe(200);
    expect(response.body.result).toEqual({ text });
  });

  it('still refuses malformed JSON, an empty JSON body and a __proto__ key as before', async () => {
    const malformed = await post('/v1/tools/echo/invoke', '{"arguments": {');
    const empty = await post('/v1/tools/echo/invoke', '');
    const poisoned = await post('/v1/tools/echo/invoke', '{"arguments":{"__proto__":{"admin":true}}}');
    const constructed = await post(
      '/v1/tools/echo/invoke',
      '{"arguments":{"constructor":{"prototype":{"admin":true}}}}',
    );

    expect(expectEnvelope(malformed, 400, 'invalid_request').message).toBe('request body is not valid JSON');
    expectEnvelope(empty, 400, 'invalid_request');
    expectEnvelope(poisoned, 400, 'invalid_request');
    expectEnvelope(constructed, 400, 'invalid_request');
    await expectNothingRan();
  });
});
