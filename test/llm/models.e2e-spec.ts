import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { send } from '../support/http-client';
import { testTenant } from '../support/tenants';

const ACME = testTenant('acme');
const GAMMA = testTenant('gamma');

const offline = (model: string) => ({ lane: 'llm', targets: [{ provider: 'fake', model }] });

/** `open` is every caller's; `solo` acme's alone. */
const ROUTES = {
  open: offline('open-model'),
  solo: { ...offline('solo-model'), tenants: ['acme'] },
  third: offline('third-model'),
};

const openai = (app: TestApp, key: string) => new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 });
const anthropic = (app: TestApp, key: string) => new Anthropic({ baseURL: app.url, apiKey: key, maxRetries: 0 });

/**
 * `GET /v1/models` and `GET /v1/models/{id}`: the routes a tenant may use, as the OpenAI and the
 * Anthropic SDK each list and retrieve models (docs/http-contract.md section 7).
 */
describe.each(PLATFORMS)('GET /v1/models, on %s', (platform) => {
  let app: TestApp;

  beforeAll(async () => {
    app = await createTestApp(
      {
        auth: { allowAnonymous: false, apiKeys: [ACME.apiKey, GAMMA.apiKey] },
        lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
        llm: { routes: ROUTES },
      },
      { platform },
    );
  });

  afterAll(() => app.close());

  it("lists the routes the tenant may use to OpenAI's SDK, in the config's order", async () => {
    const acme = [];
    for await (const model of openai(app, ACME.key).models.list()) acme.push(model);
    const gamma = [];
    for await (const model of openai(app, GAMMA.key).models.list()) gamma.push(model.id);

    expect(acme.map((model) => model.id)).toEqual(['open', 'solo', 'third']);
    expect(acme[0]).toEqual({ id: 'open', object: 'model', created: expect.any(Number), owned_by: 'bulkhead' });
    expect(Math.abs(acme[0].created - Date.now() / 1000)).toBeLessThan(600);
    expect(gamma).toEqual(['open', 'third']);
  });

  it("retrieves one route, and a route the tenant may not use is OpenAI's NotFoundError", async () => {
    expect(await openai(app, ACME.key).models.retrieve('solo')).toMatchObject({ id: 'solo', object: 'model' });

    const refused = await openai(app, GAMMA.key)
      .models.retrieve('solo')
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    expect((refused as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
      type: 'not_found',
      message: 'no LLM route of that name (routes: open, third)',
    });
  });

  it("lists them to Anthropic's SDK in its own shape, a page at a time", async () => {
    const client = anthropic(app, ACME.key);
    const first = await client.models.list({ limit: 2 });
    const all = [];
    for await (const model of client.models.list({ limit: 2 })) all.push(model);

    expect(first.data.map((model) => model.id)).toEqual(['open', 'solo']);
    expect(first.has_more).toBe(true);
    expect(first.data[0]).toEqual({
      type: 'model',
      id: 'open',
      display_name: 'open',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(all.map((model) => model.id)).toEqual(['open', 'solo', 'third']);
    expect((await client.models.retrieve('third')).id).toBe('third');
  });

  it('pages backwards from before_id, and says where each page starts and ends', async () => {
    const headers = { ...ACME.headers, 'anthropic-version': '2023-06-01' };

    const page = await send('GET', `${app.url}/v1/models?limit=1&before_id=third`, { headers });

    expect(page.body).toMatchObject({ data: [{ id: 'solo' }], has_more: true, first_id: 'solo', last_id: 'solo' });
  });

  it("refuses a bad page size, an unknown model and a missing key in Anthropic's error shape", async () => {
    const client = anthropic(app, GAMMA.key);
    const badLimit = await send('GET', `${app.url}/v1/models?limit=0`, {
      headers: { ...GAMMA.headers, 'anthropic-version': '2023-06-01' },
    });
    const unknown = await client.models.retrieve('solo').catch((error: unknown) => error);
    const keyless = await anthropic(app, 'no-such-key-0123456789')
      .models.list()
      .catch((error: unknown) => error);

    expect(badLimit.status).toBe(400);
    expect(badLimit.body).toMatchObject({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        kind: 'invalid_request',
        message: 'limit: must be an integer from 1 to 1000',
      },
    });
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect((unknown as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error', kind: 'not_found' },
    });
    expect(keyless).toBeInstanceOf(Anthropic.AuthenticationError);
  });
});
