import OpenAI from 'openai';
import { createTestApp, type TestApp } from '../support/create-app';
import { type Response, send } from '../support/http-client';
import { testTenant } from '../support/tenants';

const ACME = testTenant('acme');
const BETA = testTenant('beta');
const GAMMA = testTenant('gamma');
const NOBODY: { headers: Record<string, string> } = { headers: {} };

const offline = (model: string) => ({ lane: 'llm', targets: [{ provider: 'fake', model }] });

/** `open` is every caller's (anonymous too: the tests let callers without a key in); `team` acme's and beta's; `solo` acme's. */
const ROUTES = {
  open: offline('open-model'),
  team: { ...offline('team-model'), tenants: ['acme', 'beta'] },
  solo: { ...offline('solo-model'), tenants: ['acme'] },
};

async function start(routes: Record<string, unknown>): Promise<TestApp> {
  return createTestApp({
    auth: { apiKeys: [ACME.apiKey, BETA.apiKey, GAMMA.apiKey] },
    lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
    llm: { routes },
  });
}

/** A raw chat request for `model`, as `who`. */
function ask(app: TestApp, who: { headers: Record<string, string> }, model: string, stream = false): Promise<Response> {
  return send('POST', `${app.url}/v1/chat/completions`, {
    json: { model, messages: [{ role: 'user', content: 'hello' }], ...(stream ? { stream: true } : {}) },
    headers: who.headers,
  });
}

/** What a client can tell two refusals apart by: everything but the call id it was given. */
function seen(response: Response) {
  const { callId: _callId, ...body } = response.body as Record<string, unknown>;
  const { 'x-call-id': _id, date: _date, ...headers } = response.headers;
  return { status: response.status, headers, body };
}

/**
 * `llm.routes.<name>.tenants`: a route listed for some tenants exists only for them; any other
 * caller gets exactly the `not_found` of a route that does not exist, naming only the routes it
 * may use (docs/http-contract.md section 7).
 */
describe('LLM routes open to some tenants only', () => {
  let app: TestApp | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('serves a listed route to each tenant it lists, and an unlisted one to everyone', async () => {
    app = await start(ROUTES);

    for (const [who, model] of [
      [ACME, 'solo'],
      [ACME, 'team'],
      [BETA, 'team'],
      [GAMMA, 'open'],
      [NOBODY, 'open'],
    ] as const) {
      const answer = await ask(app, who, model);
      expect({ model, status: answer.status }).toEqual({ model, status: 200 });
    }
  });

  it.each<[string, string, { headers: Record<string, string> }]>([
    ['beta', 'solo', BETA],
    ['gamma', 'team', GAMMA],
    ['a caller without a key', 'solo', NOBODY],
  ])('answers %s asking for %s exactly as for a route that does not exist', async (_who, model, who) => {
    app = await start(ROUTES);

    const refused = await ask(app, who, model);
    const unknown = await ask(app, who, 'no-such-route');

    expect(refused.status).toBe(404);
    expect(refused.body.error).toMatchObject({ kind: 'not_found', type: 'not_found', code: 'not_found' });
    expect(seen(refused)).toEqual(seen(unknown));
    expect(JSON.stringify(refused.body)).not.toContain(model);
  });

  it('answers a streamed request for a route the tenant may not use the same way, before any stream', async () => {
    app = await start(ROUTES);

    const refused = await ask(app, BETA, 'solo', true);

    expect(refused.status).toBe(404);
    expect(String(refused.headers['content-type'])).toMatch(/^application\/json/);
    expect(seen(refused)).toEqual(seen(await ask(app, BETA, 'no-such-route', true)));
  });

  it.each<[string, string, { headers: Record<string, string> }]>([
    ['acme', 'open, team, solo', ACME],
    ['beta', 'open, team', BETA],
    ['gamma', 'open', GAMMA],
    ['a caller without a key', 'open', NOBODY],
  ])('names to %s only the routes it may use (%s)', async (_who, names, who) => {
    app = await start(ROUTES);

    const unknown = await ask(app, who, 'no-such-route');

    expect(unknown.body.error.message).toBe(`no LLM route of that name (routes: ${names})`);
  });

  it('says a tenant may use no route, naming none, when every route is listed for others', async () => {
    app = await start({ solo: ROUTES.solo, team: ROUTES.team });

    for (const who of [GAMMA, NOBODY]) {
      const unknown = await ask(app, who, 'solo');
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.message).toBe('no LLM route of that name (this tenant may use none)');
    }
  });

  it('runs nothing for a refused tenant: no attempt of the route is counted', async () => {
    app = await start(ROUTES);

    await ask(app, BETA, 'solo');

    const metrics = (await send('GET', `${app.url}/metrics`)).body as string;
    expect(metrics).not.toMatch(/bulkhead_llm_requests_total\{[^}]*route="solo"/);
    expect(metrics).not.toMatch(/bulkhead_calls_total\{[^}]*tool="llm\.solo"/);
  });

  it('is a NotFoundError for the openai SDK, whose message names only the routes the tenant may use', async () => {
    app = await start(ROUTES);
    const client = new OpenAI({ apiKey: BETA.key, baseURL: `${app.url}/v1`, maxRetries: 0 });

    const failure = await client.chat.completions
      .create({ model: 'solo', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(OpenAI.NotFoundError);
    expect(failure).toMatchObject({ code: 'not_found', type: 'not_found' });
    expect((failure as Error).message).toBe('404 no LLM route of that name (routes: open, team)');
  });
});
