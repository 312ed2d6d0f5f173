import OpenAI from 'openai';
import { capForWorstCases, sendAtOnce } from '../support/budget-race';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import type { Deferred } from '../support/deferred';
import { eventually } from '../support/eventually';
import { send } from '../support/http-client';
import { anthropicMessage, openaiAnswer, toolCallChoice } from '../support/llm-answers';
import { parsePromText, sampleValue } from '../support/prom-text';
import { FakeClock } from '../../src/common/fake-clock';
import { estimateInputTokens } from '../../src/llm/pricing';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { heldIn, json, Upstream, type UpstreamRequest } from '../support/upstream';

const ACME = testTenant('acme');
const BETA = testTenant('beta');
const PRIMARY_KEY = 'sk-primary-provider-key-0123456789';
const ANTHROPIC_KEY = 'sk-ant-provider-key-0123456789';

function body(request: UpstreamRequest): Record<string, unknown> {
  return JSON.parse(request.body) as Record<string, unknown>;
}

describe.each(PLATFORMS)('POST /v1/chat/completions with the openai SDK as the client, on %s', (platform) => {
  let primary: Upstream;
  let secondary: Upstream;
  let app: TestApp;

  const client = (tenant = ACME) => new OpenAI({ apiKey: tenant.key, baseURL: `${app.url}/v1`, maxRetries: 0 });
  const ask = (text: string, tenant = ACME, extra: Record<string, unknown> = {}) =>
    client(tenant).chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: text }], ...extra });

  async function start(llm: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> {
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey, BETA.apiKey] },
        lanes: { llm: { concurrency: 16, queueCapacity: 16 } },
        llm,
        ...extra,
      },
      { platform },
    );
  }

  const twoTargets = (route: Record<string, unknown> = {}) => ({
    routes: {
      chat: {
        lane: 'llm',
        targets: [
          { provider: 'openai', model: 'gpt-primary', baseUrl: primary.url('/v1'), apiKey: PRIMARY_KEY },
          { provider: 'openai', model: 'gpt-secondary', baseUrl: secondary.url('/v1') },
        ],
        retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
        ...route,
      },
    },
  });

  beforeEach(async () => {
    primary = await Upstream.start(json(200, openaiAnswer('from primary', undefined, 'gpt-primary')));
    secondary = await Upstream.start(json(200, openaiAnswer('from secondary', undefined, 'gpt-secondary')));
  });

  afterEach(async () => {
    await app?.close();
    await primary.close();
    await secondary.close();
  });

  it('serves through the first target, with the provider key from the config and never the caller key', async () => {
    await start(twoTargets());

    const { data, response } = await ask('hello').withResponse();

    expect(data.choices[0].message.content).toBe('from primary');
    expect(data.model).toBe('gpt-primary');
    expect(response.headers.get('x-bulkhead-served-by')).toBe('openai/gpt-primary');
    expect(response.headers.get('x-bulkhead-attempts')).toBe('1');
    expect(response.headers.get('x-bulkhead-cache')).toBe('miss');
    expect((data as unknown as { bulkhead: Record<string, unknown> }).bulkhead).toMatchObject({
      servedBy: 'openai/gpt-primary',
      attempts: 1,
      fromCache: false,
      hedged: false,
    });
    expect(primary.requests).toHaveLength(1);
    const sent = primary.requests[0];
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${PRIMARY_KEY}`);
    expect(JSON.stringify(sent.headers)).not.toContain(ACME.key);
    expect(body(sent)).toMatchObject({ model: 'gpt-primary', messages: [{ role: 'user', content: 'hello' }] });
    // The route's output cap is sent when the client sets none: the reservation's bound, in the
    // one field OpenAI takes for every model.
    expect(body(sent).max_completion_tokens).toBe(4096);
    expect(body(sent)).not.toHaveProperty('max_tokens');
  });

  it('retries a target that fails transiently, then fails over to the next', async () => {
    primary.use(json(503, { error: { message: 'overloaded', type: 'server_error' } }));
    await start(twoTargets());

    const { data, response } = await ask('hello').withResponse();

    expect(data.choices[0].message.content).toBe('from secondary');
    expect(primary.requests).toHaveLength(2);
    expect(secondary.requests).toHaveLength(1);
    expect(response.headers.get('x-bulkhead-served-by')).toBe('openai/gpt-secondary');
    expect(response.headers.get('x-bulkhead-attempts')).toBe('3');
    const prom = parsePromText((await send('GET', `${app.url}/metrics`)).body as string);
    const attempts = (target: string, outcome: string) =>
      sampleValue(prom, 'bulkhead_llm_requests_total', { route: 'chat', target, outcome });
    expect(attempts('openai/gpt-primary', 'transient')).toBe(2);
    expect(attempts('openai/gpt-secondary', 'ok')).toBe(1);
    expect(sampleValue(prom, 'bulkhead_llm_failovers_total', { route: 'chat' })).toBe(1);
    expect(
      sampleValue(prom, 'bulkhead_llm_tokens_total', {
        route: 'chat',
        target: 'openai/gpt-secondary',
        kind: 'completion',
      }),
    ).toBe(5);
    expect(sampleValue(prom, 'bulkhead_calls_total', { tool: 'llm.chat', outcome: 'ok', transport: 'http' })).toBe(1);
  });

  it('never retries insufficient_quota: it moves to the next target at once', async () => {
    primary.use(json(429, { error: { message: 'quota', type: 'insufficient_quota', code: 'insufficient_quota' } }));
    await start(twoTargets());

    const { data } = await ask('hello').withResponse();

    expect(data.choices[0].message.content).toBe('from secondary');
    expect(primary.requests).toHaveLength(1);
  });

  it('answers an unknown model with 404 as the SDK NotFoundError, in the envelope with OpenAI fields', async () => {
    await start(twoTargets());

    const failure = await client()
      .chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(OpenAI.NotFoundError);
    const raw = await send('POST', `${app.url}/v1/chat/completions`, {
      json: { model: 'nope', messages: [{ role: 'user', content: 'hi' }] },
      headers: ACME.headers,
    });
    expect(raw.status).toBe(404);
    expect(raw.body.error).toMatchObject({ kind: 'not_found', type: 'not_found', code: 'not_found', param: null });
  });

  it('answers every target failing with the last failure, and never echoes a provider key', async () => {
    primary.use(json(401, { error: { message: `bad key ${PRIMARY_KEY}` } }));
    secondary.use(json(500, { error: { message: `boom ${PRIMARY_KEY}` } }));
    await start(twoTargets());

    const raw = await send('POST', `${app.url}/v1/chat/completions`, {
      json: { model: 'chat', messages: [{ role: 'user', content: 'hi' }] },
      headers: ACME.headers,
    });

    expect(raw.status).toBe(502);
    expect(raw.body.error.kind).toBe('transient');
    expect(raw.body.error.attempts).toBe(3);
    expect(raw.headers['x-bulkhead-attempts']).toBe('3');
    const events = await send('GET', `${app.url}/v1/events`, { headers: ACME.headers });
    for (const text of [JSON.stringify(raw), JSON.stringify(events.body)]) {
      expect(text).not.toContain(PRIMARY_KEY);
      expect(text).not.toContain(ACME.key);
    }
  });

  it('answers a repeated request from the cache, for the same tenant only', async () => {
    await start(twoTargets());

    await ask('same question');
    const { data, response } = await ask('same question').withResponse();
    expect(response.headers.get('x-bulkhead-cache')).toBe('hit');
    expect(response.headers.get('x-bulkhead-cost-usd')).toBe('0.000000');
    expect(data.choices[0].message.content).toBe('from primary');
    expect(primary.requests).toHaveLength(1);

    const other = await ask('same question', BETA).withResponse();
    expect(other.response.headers.get('x-bulkhead-cache')).toBe('miss');
    expect(primary.requests).toHaveLength(2);
  });

  describe('the semantic cache (opt-in per route)', () => {
    const semantic = (route: Record<string, unknown> = {}) => ({
      ...twoTargets({ semanticCache: true, ...route }),
      cache: { semantic: { enabled: true, threshold: 0.7 } },
    });

    it('answers a similar question with a stored answer, marked as semantic, for the same tenant only', async () => {
      await start(semantic());

      await ask('What is the capital city of France?');
      const { data, response } = await ask('what is the capital city of france').withResponse();
      const other = await ask('what is the capital city of france', BETA).withResponse();

      expect(response.headers.get('x-bulkhead-cache')).toBe('semantic');
      expect(response.headers.get('x-bulkhead-cost-usd')).toBe('0.000000');
      const marks = (data as unknown as { bulkhead: { fromCache: boolean; similarity: number } }).bulkhead;
      expect(marks.fromCache).toBe(true);
      expect(marks.similarity).toBeGreaterThanOrEqual(0.7);
      expect(other.response.headers.get('x-bulkhead-cache')).toBe('miss');
      expect(primary.requests).toHaveLength(2);
      const metrics = await send('GET', `${app.url}/metrics`);
      expect(
        sampleValue(parsePromText(metrics.body as string), 'bulkhead_llm_cache_total', {
          route: 'chat',
          result: 'semantic',
        }),
      ).toBe(1);
    });

    it('never answers an unrelated question, a request with tools, or a route that did not opt in', async () => {
      await start({
        ...semantic(),
        routes: { ...semantic().routes, plain: { ...semantic().routes.chat, semanticCache: false } },
      });

      await ask('What is the capital city of France?');
      const unrelated = await ask('How many legs does a spider have?').withResponse();
      const withTools = await ask('what is the capital city of france', ACME, {
        tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      }).withResponse();
      await client().chat.completions.create({
        model: 'plain',
        messages: [{ role: 'user', content: 'What is the capital city of France?' }],
      });
      const plain = await client()
        .chat.completions.create({
          model: 'plain',
          messages: [{ role: 'user', content: 'what is the capital city of france' }],
        })
        .withResponse();

      expect(unrelated.response.headers.get('x-bulkhead-cache')).toBe('miss');
      expect(withTools.response.headers.get('x-bulkhead-cache')).toBe('miss');
      expect(plain.response.headers.get('x-bulkhead-cache')).toBe('miss');
      expect(primary.requests).toHaveLength(5);
    });
  });

  it('skips the cache with Cache-Control: no-cache and no-store', async () => {
    await start(twoTargets());
    await ask('q');

    const fresh = await client()
      .chat.completions.create(
        { model: 'chat', messages: [{ role: 'user', content: 'q' }] },
        { headers: { 'cache-control': 'no-cache' } },
      )
      .withResponse();

    expect(fresh.response.headers.get('x-bulkhead-cache')).toBe('miss');
    expect(primary.requests).toHaveLength(2);
  });

  it('never caches a tool call: a request to act reaches the caller live every time', async () => {
    primary.use(
      json(200, {
        ...openaiAnswer('', undefined, 'gpt-primary'),
        choices: [toolCallChoice('call_1', 'refund', '{"id":7}')],
      }),
    );
    await start(twoTargets());
    const tools = [{ type: 'function' as const, function: { name: 'refund', parameters: { type: 'object' } } }];

    const first = await ask('refund order 7', ACME, { tools });
    await ask('refund order 7', ACME, { tools });

    expect(first.choices[0].message.tool_calls?.[0]).toMatchObject({ function: { name: 'refund' } });
    expect(primary.requests).toHaveLength(2);
  });

  it('lets 10 concurrent requests never spend past a budget: each holds its worst case before it starts', async () => {
    const gates: Array<Deferred<void>> = [];
    // 40 prompt tokens: within each question's estimate, so charged as reported.
    primary.use(heldIn(gates, json(200, openaiAnswer('ok', { prompt_tokens: 40, completion_tokens: 100 }))));
    // One request's worst case: its input estimate and 1000 output tokens, at $1 per million
    // tokens each way; the cap holds three of them at once and not four.
    const capUsd = capForWorstCases(3.5);
    await start(
      {
        ...twoTargets({ maxOutputTokens: 1000, targets: [twoTargets().routes.chat.targets[0]] }),
        prices: { 'openai/gpt-primary': { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } },
      },
      {
        budgets: { tenants: { acme: capUsd } },
        auth: { apiKeys: [ACME.apiKey, BETA.apiKey], adminToken: ADMIN_TOKEN },
      },
    );

    // Ten different questions: identical ones would be joined into one provider call.
    const { answers, refused } = sendAtOnce(10, (index) => ask(`x${index}`));
    // Three hold the budget at the upstream; the other seven are refused before any request leaves.
    await eventually(() => expect([gates.length, refused.length]).toEqual([3, 7]));
    for (const gate of gates) gate.resolve();
    const statuses = await Promise.all(answers);

    expect(statuses.filter((status) => status === 200)).toHaveLength(3);
    expect(statuses.filter((status) => status === 402)).toHaveLength(7);
    expect(primary.requests).toHaveLength(3);
    const view = await send('GET', `${app.url}/v1/admin/budgets/acme`, { headers: AS_ADMIN });
    // Charged the real usage of the three (140 tokens each at $1/MTok), the rest freed.
    expect(view.body).toMatchObject({ spentUsd: 0.00042, reservedUsd: 0 });
  });

  it('translates to and from the Anthropic Messages API, with the provider key and version header', async () => {
    primary.use(
      json(
        200,
        anthropicMessage({
          id: 'msg_1',
          model: 'claude-test',
          content: [{ type: 'text', text: 'hola' }],
          usage: { input_tokens: 10, output_tokens: 3 },
        }),
      ),
    );
    await start({
      routes: {
        chat: {
          lane: 'llm',
          targets: [
            { provider: 'anthropic', model: 'claude-test', baseUrl: primary.url('/v1'), apiKey: ANTHROPIC_KEY },
          ],
          maxOutputTokens: 300,
        },
      },
    });

    const answer = await client().chat.completions.create({
      model: 'chat',
      messages: [
        { role: 'system', content: 'answer in Spanish' },
        { role: 'user', content: 'hello' },
      ],
    });

    expect(answer.choices[0]).toMatchObject({ message: { role: 'assistant', content: 'hola' }, finish_reason: 'stop' });
    expect(answer.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 });
    const sent = primary.requests[0];
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(body(sent)).toMatchObject({
      model: 'claude-test',
      max_tokens: 300,
      system: [{ type: 'text', text: 'answer in Spanish' }],
      messages: [{ role: 'user', content: 'hello' }],
    });
  });

  it('settles the tokens-per-minute bucket to the real usage, not the worst case it held', async () => {
    const clock = new FakeClock();
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey] },
        lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
        rateLimits: { tenants: { acme: { tpm: 100_000 } } },
        llm: twoTargets({ maxOutputTokens: 1000 }),
      },
      { platform, clock },
    );
    const worst =
      estimateInputTokens({ model: 'chat', messages: [{ role: 'user', content: 'q1' }], max_tokens: 1000 }) + 1000;

    const first = await ask('q1').withResponse();
    const second = await ask('q2').withResponse();

    const left = (response: Response) => Number(/"tpm";r=(\d+)/.exec(response.headers.get('ratelimit') ?? '')?.[1]);
    expect(left(first.response)).toBe(100_000 - worst);
    // The first request used 17 tokens (12 prompt, 5 completion): the rest of its hold came back.
    expect(left(second.response)).toBe(100_000 - 17 - worst);
  });

  it('answers a repeated Idempotency-Key with the first answer, and the key with another request as a conflict', async () => {
    await start(twoTargets({ cache: false }));
    const keyed = (content: string) =>
      client().chat.completions.create(
        { model: 'chat', messages: [{ role: 'user', content }] },
        { headers: { 'idempotency-key': 'order-7-summary' } },
      );

    const first = await keyed('summarise order 7');
    const again = await keyed('summarise order 7').withResponse();
    const other = await keyed('summarise order 8').catch((error: unknown) => error);

    expect(primary.requests).toHaveLength(1);
    expect(again.data.choices[0].message.content).toBe(first.choices[0].message.content);
    expect((again.data as unknown as { bulkhead: { replayed: boolean } }).bulkhead.replayed).toBe(true);
    expect(again.response.headers.get('x-bulkhead-cost-usd')).toBe('0.000000');
    expect(other).toBeInstanceOf(OpenAI.UnprocessableEntityError);
  });

  it('refuses to start with a target that has no price while budgets are configured', async () => {
    const starting = createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey] },
        lanes: { llm: { concurrency: 1, queueCapacity: 0 } },
        budgets: { defaultUsd: 5 },
        llm: { routes: { chat: { lane: 'llm', targets: [{ provider: 'fake', model: 'unpriced-1' }] } } },
      },
      { platform },
    );

    await expect(starting).rejects.toThrow(
      "llm.routes.chat.targets.0: no price for fake/unpriced-1, and budgets are configured: set llm.prices['fake/unpriced-1']",
    );
  });
});
