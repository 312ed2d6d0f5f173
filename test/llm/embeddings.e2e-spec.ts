import { createOpenAI } from '@ai-sdk/openai';
import { OpenAIEmbeddings } from '@langchain/openai';
import { embed, embedMany } from 'ai';
import OpenAI from 'openai';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { base64Of, embeddingsUpstream, vectorOf } from '../support/embeddings-upstream';
import { expectEnvelope } from '../support/envelope';
import { send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { FakeClock } from '../../src/common/fake-clock';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { hang, json, Upstream, type UpstreamHandler, type UpstreamRequest } from '../support/upstream';

const ACME = testTenant('acme');
const PRIMARY_KEY = 'sk-embeddings-provider-key-0123456789';
/** The chat route beside the embeddings one needs a price once budgets are on. */
const CHAT_PRICE = { 'anthropic/claude-test': { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } };

function body(request: UpstreamRequest): Record<string, unknown> {
  return JSON.parse(request.body) as Record<string, unknown>;
}

/** A well-formed answer with one thing wrong in it, for `inputs` inputs. */
function answerWith(data: unknown[], usage: unknown = { prompt_tokens: 2, total_tokens: 2 }): UpstreamHandler {
  return json(200, { object: 'list', model: 'embed-test', data, usage });
}

describe.each(PLATFORMS)('POST /v1/embeddings, on %s', (platform) => {
  let primary: Upstream;
  let secondary: Upstream;
  let app: TestApp;

  const url = () => `${app.url}/v1`;
  const client = () => new OpenAI({ apiKey: ACME.key, baseURL: url(), maxRetries: 0 });
  const post = (json: unknown, headers: Record<string, string> = {}) =>
    send('POST', `${url()}/embeddings`, { json, headers: { ...ACME.headers, ...headers } });

  async function start(route: Record<string, unknown> = {}, llm: Record<string, unknown> = {}, extra = {}) {
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey], adminToken: ADMIN_TOKEN },
        lanes: { llm: { concurrency: 8, queueCapacity: 8 } },
        llm: {
          routes: {
            embed: {
              lane: 'llm',
              targets: [
                { provider: 'openai', model: 'embed-primary', baseUrl: primary.url('/v1'), apiKey: PRIMARY_KEY },
                { provider: 'openai', model: 'embed-secondary', baseUrl: secondary.url('/v1') },
              ],
              retry: { maxAttempts: 1 },
              ...route,
            },
            chat: {
              lane: 'llm',
              targets: [
                { provider: 'anthropic', model: 'claude-test', baseUrl: primary.url('/v1'), apiKey: 'sk-ant-x' },
              ],
            },
          },
          ...llm,
        },
        ...extra,
      },
      { platform },
    );
  }

  beforeEach(async () => {
    primary = await Upstream.start(embeddingsUpstream('embed-primary'));
    secondary = await Upstream.start(embeddingsUpstream('embed-secondary'));
  });

  afterEach(async () => {
    await app?.close();
    await primary.close();
    await secondary.close();
  });

  describe('with the openai SDK', () => {
    it('serves its default request (base64), passed on as it came and decoded by the SDK', async () => {
      await start();

      const { data, response } = await client()
        .embeddings.create({ model: 'embed', input: ['the first text', 'a second'] })
        .withResponse();

      expect(data.data.map((item) => item.embedding)).toEqual([vectorOf('the first text', 8), vectorOf('a second', 8)]);
      expect(data.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
      expect(data.model).toBe('embed-primary');
      expect(response.headers.get('x-bulkhead-served-by')).toBe('openai/embed-primary');
      expect(response.headers.get('x-bulkhead-attempts')).toBe('1');
      expect(response.headers.get('x-bulkhead-cache')).toBe('miss');
      const sent = primary.requests[0];
      expect(sent.path).toBe('/v1/embeddings');
      expect(sent.headers.authorization).toBe(`Bearer ${PRIMARY_KEY}`);
      expect(JSON.stringify(sent.headers)).not.toContain(ACME.key);
      expect(body(sent)).toEqual({
        model: 'embed-primary',
        input: ['the first text', 'a second'],
        encoding_format: 'base64',
      });
    });

    it('passes float, dimensions, user and token arrays through, and gives the vectors back as numbers', async () => {
      await start();

      const floats = await client().embeddings.create({
        model: 'embed',
        input: [
          [1, 2, 3],
          [4, 5],
        ],
        encoding_format: 'float',
        dimensions: 4,
        user: 'end-user-7',
      });

      expect(floats.data).toEqual([
        { object: 'embedding', index: 0, embedding: vectorOf([1, 2, 3], 4) },
        { object: 'embedding', index: 1, embedding: vectorOf([4, 5], 4) },
      ]);
      expect(body(primary.requests[0])).toEqual({
        model: 'embed-primary',
        input: [
          [1, 2, 3],
          [4, 5],
        ],
        encoding_format: 'float',
        dimensions: 4,
        user: 'end-user-7',
      });
    });

    it('gives a base64 answer back as the provider sent it', async () => {
      await start();

      const answer = await post({ model: 'embed', input: 'one text', encoding_format: 'base64' });

      expect(answer.status).toBe(200);
      expect(answer.body.data).toEqual([
        { object: 'embedding', index: 0, embedding: base64Of(vectorOf('one text', 8)) },
      ]);
      expect(answer.body.bulkhead).toMatchObject({ servedBy: 'openai/embed-primary', attempts: 1, fromCache: false });
    });
  });

  describe('with the Vercel AI SDK', () => {
    const provider = () => createOpenAI({ baseURL: url(), apiKey: ACME.key });

    it('embeds one value and many', async () => {
      await start();

      const one = await embed({ model: provider().embedding('embed'), value: 'sunny day', maxRetries: 0 });
      const many = await embedMany({
        model: provider().embedding('embed'),
        values: ['rain', 'snow and ice'],
        maxRetries: 0,
      });

      expect(one.embedding).toEqual(vectorOf('sunny day', 8));
      expect(one.usage.tokens).toBe(2);
      expect(many.embeddings).toEqual([vectorOf('rain', 8), vectorOf('snow and ice', 8)]);
      expect(many.usage.tokens).toBe(4);
    });
  });

  describe("with LangChain's OpenAIEmbeddings", () => {
    it('embeds a query and documents', async () => {
      await start();
      const embeddings = new OpenAIEmbeddings({
        model: 'embed',
        apiKey: ACME.key,
        configuration: { baseURL: url() },
        maxRetries: 0,
      });

      const query = await embeddings.embedQuery('where is the station');
      const documents = await embeddings.embedDocuments(['the station is north', 'trains leave hourly']);

      expect(query).toEqual(vectorOf('where is the station', 8));
      expect(documents).toEqual([vectorOf('the station is north', 8), vectorOf('trains leave hourly', 8)]);
      expect(body(primary.requests[0])).toMatchObject({ model: 'embed-primary', input: 'where is the station' });
    });
  });

  it('charges the budget exactly the provider’s prompt tokens at the input price, and holds nothing after', async () => {
    await start(
      { targets: [{ provider: 'openai', model: 'embed-primary', baseUrl: primary.url('/v1') }] },
      { prices: { ...CHAT_PRICE, 'openai/embed-primary': { inputPerMTokUsd: 20, outputPerMTokUsd: 1000 } } },
      { budgets: { tenants: { acme: 1 } } },
    );

    const answer = await post({ model: 'embed', input: ['one two three', 'four five six seven'] });
    const view = await send('GET', `${app.url}/v1/admin/budgets/acme`, { headers: AS_ADMIN });

    // 7 tokens × $20 per million: $0.00014, whatever the estimate held.
    expect(answer.body.usage).toEqual({ prompt_tokens: 7, total_tokens: 7 });
    expect(answer.headers['x-bulkhead-cost-usd']).toBe('0.000140');
    expect(view.body).toMatchObject({ spentUsd: 0.00014, reservedUsd: 0 });
  });

  it('refuses a request the budget cannot hold, before any provider is asked', async () => {
    await start(
      { targets: [{ provider: 'openai', model: 'embed-primary', baseUrl: primary.url('/v1') }] },
      { prices: { ...CHAT_PRICE, 'openai/embed-primary': { inputPerMTokUsd: 1_000, outputPerMTokUsd: 1_000 } } },
      { budgets: { tenants: { acme: 0.001 } } },
    );

    // 2,000 bytes of input: a bound of 2,004 tokens, $0.002 at $1,000 per million.
    const refused = await post({ model: 'embed', input: 'x'.repeat(2_000) });

    expectEnvelope(refused, 402, 'budget_exceeded');
    expect(primary.requests).toHaveLength(0);
  });

  it('fails over to the next target when the first answers 500', async () => {
    primary.use(json(500, { error: { message: 'down', type: 'server_error' } }));
    await start();

    const { data, response } = await client()
      .embeddings.create({ model: 'embed', input: 'hello', encoding_format: 'float' })
      .withResponse();

    expect(data.data[0].embedding).toEqual(vectorOf('hello', 8));
    expect(response.headers.get('x-bulkhead-served-by')).toBe('openai/embed-secondary');
    expect(response.headers.get('x-bulkhead-attempts')).toBe('2');
    expect([primary.requests.length, secondary.requests.length]).toEqual([1, 1]);
    expect(body(secondary.requests[0]).model).toBe('embed-secondary');
  });

  it('hedges a slow target with the next, and charges the one that lost the prompt it was sent', async () => {
    primary.use(hang);
    await start(
      { hedgeAfterMs: 50 },
      {
        prices: {
          ...CHAT_PRICE,
          'openai/embed-primary': { inputPerMTokUsd: 10, outputPerMTokUsd: 10 },
          'openai/embed-secondary': { inputPerMTokUsd: 10, outputPerMTokUsd: 10 },
        },
      },
      { budgets: { tenants: { acme: 1 } } },
    );

    const answer = await post({ model: 'embed', input: 'ab cd' });
    const view = await send('GET', `${app.url}/v1/admin/budgets/acme`, { headers: AS_ADMIN });

    expect(answer.status).toBe(200);
    expect(answer.body.bulkhead).toMatchObject({ servedBy: 'openai/embed-secondary', hedged: true, attempts: 2 });
    // The winner's 2 tokens, and the loser's prompt at its estimate (5 bytes + 4), at $10 per million.
    expect(view.body).toMatchObject({ spentUsd: 0.00011, reservedUsd: 0 });
  });

  describe('a malformed answer costs its request the answer, and nothing more', () => {
    const vector = [0.5, 0.25];
    const cases: Array<[string, Record<string, unknown>, UpstreamHandler]> = [
      ['a vector of strings', { input: 'a' }, answerWith([{ index: 0, embedding: ['0.5', '0.25'] }])],
      ['fewer vectors than inputs', { input: ['a', 'b'] }, answerWith([{ index: 0, embedding: vector }])],
      [
        'more vectors than inputs',
        { input: 'a' },
        answerWith([
          { index: 0, embedding: vector },
          { index: 1, embedding: vector },
        ]),
      ],
      ['an index out of range', { input: 'a' }, answerWith([{ index: 3, embedding: vector }])],
      [
        'an index given twice',
        { input: ['a', 'b'] },
        answerWith([
          { index: 0, embedding: vector },
          { index: 0, embedding: vector },
        ]),
      ],
      [
        'base64 that is not',
        { input: 'a', encoding_format: 'base64' },
        answerWith([{ index: 0, embedding: 'not*base64!' }]),
      ],
      ['floats where base64 was asked', { input: 'a', encoding_format: 'base64' }, answerWith([{ embedding: vector }])],
      ['other dimensions than asked', { input: 'a', dimensions: 3 }, answerWith([{ index: 0, embedding: vector }])],
      ['no usage', { input: 'a' }, json(200, { object: 'list', data: [{ index: 0, embedding: vector }] })],
      ['no JSON at all', { input: 'a' }, (_request, response) => void response.writeHead(200).end('{"data": [')],
    ];

    it.each(cases)('%s: 502 bad_response, then the next request is served', async (_name, request, handler) => {
      primary.use(handler);
      await start({ targets: [{ provider: 'openai', model: 'embed-primary', baseUrl: primary.url('/v1') }] });

      const failed = await post({ model: 'embed', ...request });
      primary.use(embeddingsUpstream('embed-primary'));
      const served = await post({ model: 'embed', input: 'a' });

      expectEnvelope(failed, 502, 'transient');
      expect(failed.body.error.message).toBe('target openai/embed-primary answered 200 with an unreadable body');
      expect(served.status).toBe(200);
    });

    it('fails over from a malformed answer to the next target', async () => {
      primary.use(answerWith([{ index: 0, embedding: ['nope'] }]));
      await start();

      const served = await post({ model: 'embed', input: 'a', encoding_format: 'float' });

      expect(served.status).toBe(200);
      expect(served.headers['x-bulkhead-served-by']).toBe('openai/embed-secondary');
    });
  });

  it('serves the same request from the exact cache, per tenant; other dimensions or format are another entry', async () => {
    await start();
    const request = { model: 'embed', input: ['cached text'], encoding_format: 'float' };

    const first = await post(request);
    const again = await post({ ...request, user: 'another end user' });
    const otherDimensions = await post({ ...request, dimensions: 4 });
    const otherFormat = await post({ ...request, encoding_format: 'base64' });

    expect([first, again, otherDimensions, otherFormat].map((answer) => answer.headers['x-bulkhead-cache'])).toEqual([
      'miss',
      'hit',
      'miss',
      'miss',
    ]);
    expect(again.body.data).toEqual(first.body.data);
    expect(again.headers['x-bulkhead-served-by']).toBe('cache');
    expect(primary.requests).toHaveLength(3);
    const prom = parsePromText((await send('GET', `${app.url}/metrics`)).body as string);
    expect(sampleValue(prom, 'bulkhead_llm_cache_total', { route: 'embed', result: 'hit' })).toBe(1);
  });

  it("takes the inputs' estimate from the tokens-per-minute bucket, and gives back what the provider did not count", async () => {
    // Virtual time: the bucket refills nothing between the requests.
    const clock = new FakeClock();
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey] },
        lanes: { llm: { concurrency: 8, queueCapacity: 8 } },
        rateLimits: { tenants: { acme: { tpm: 1_000 } } },
        llm: {
          routes: {
            embed: {
              lane: 'llm',
              targets: [{ provider: 'openai', model: 'embed-primary', baseUrl: primary.url('/v1') }],
            },
          },
        },
      },
      { platform, clock },
    );
    const left = (answer: { headers: Record<string, unknown> }) =>
      Number(/"tpm";r=(\d+)/.exec(String(answer.headers.ratelimit ?? ''))?.[1]);

    // "two words here" is 14 bytes, a bound of 18 tokens; the provider counts 3.
    const first = await post({ model: 'embed', input: 'two words here' });
    const second = await post({ model: 'embed', input: 'two words here', encoding_format: 'base64' });
    // 994 left once the second settled to its 3: a bound of 995 is one too many, 994 fits.
    const tooMany = await post({ model: 'embed', input: 'x'.repeat(991) });
    const fits = await post({ model: 'embed', input: 'x'.repeat(990) });

    expect(left(first)).toBe(1_000 - 18);
    expect(left(second)).toBe(1_000 - 3 - 18);
    expectEnvelope(tooMany, 429, 'rate_limited');
    expect(fits.status).toBe(200);
    expect(primary.requests).toHaveLength(3);
  });

  it('answers a repeated Idempotency-Key with the first answer, at no cost, and refuses the key for another request', async () => {
    await start({ cache: false });
    const headers = { 'idempotency-key': 'embed-once-1' };

    const first = await post({ model: 'embed', input: 'only once' }, headers);
    const replay = await post({ model: 'embed', input: 'only once' }, headers);
    const conflict = await post({ model: 'embed', input: 'something else' }, headers);

    expect(first.status).toBe(200);
    expect(replay.body.data).toEqual(first.body.data);
    expect(replay.body.bulkhead).toMatchObject({ replayed: true, costUsd: 0 });
    expectEnvelope(conflict, 422, 'idempotency_conflict');
    expect(primary.requests).toHaveLength(1);
  });

  it('refuses a route whose targets cannot embed, a route that does not exist and a malformed request', async () => {
    await start();

    const cannot = await post({ model: 'chat', input: 'a' });
    const unknown = await post({ model: 'nope', input: 'a' });
    const noInput = await post({ model: 'embed' });
    const emptyList = await post({ model: 'embed', input: [] });

    expectEnvelope(cannot, 400, 'invalid_request');
    expect(cannot.body.error.message).toBe(
      'route chat does not serve embeddings: its target anthropic/claude-test cannot embed',
    );
    expectEnvelope(unknown, 404, 'not_found');
    expectEnvelope(noInput, 400, 'invalid_request');
    expectEnvelope(emptyList, 400, 'invalid_request');
    expect(primary.requests).toHaveLength(0);
  });
});
