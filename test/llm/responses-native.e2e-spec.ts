import OpenAI from 'openai';
import { createTestApp, type TestApp } from '../support/create-app';
import { testTenant } from '../support/tenants';
import { json, Upstream } from '../support/upstream';

const ACME = testTenant('acme');
const PROVIDER_KEY = 'sk-provider-key-of-the-config';
const NO_RETRY = { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 };
const ENCRYPTED = 'gAAAAABo-encrypted-reasoning-only-openai-can-read';

/** Prices that make each kind of token's charge visible in the cost: cached input, input, output. */
const PRICE = { inputPerMTokUsd: 1000, cachedInputPerMTokUsd: 100, outputPerMTokUsd: 10_000 };
/** 32 uncached and 8 cached input tokens, 300 output tokens of which 290 reasoning. */
const COST_USD = 32 * 0.001 + 8 * 0.0001 + 300 * 0.01;

/** What only the Responses API says: the model's encrypted reasoning, and how much of its output it was. */
const REASONED = {
  id: 'resp_upstream_1',
  object: 'response',
  created_at: 1_767_225_000,
  model: 'gpt-5-2025-08-07',
  status: 'completed',
  incomplete_details: null,
  error: null,
  output: [
    { type: 'reasoning', id: 'rs_upstream_1', summary: [], encrypted_content: ENCRYPTED },
    {
      type: 'message',
      id: 'msg_upstream_1',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Paris.', annotations: [], logprobs: [] }],
    },
  ],
  reasoning: { effort: 'high', summary: null },
  text: { format: { type: 'text' }, verbosity: 'low' },
  usage: {
    input_tokens: 40,
    input_tokens_details: { cached_tokens: 8 },
    output_tokens: 300,
    output_tokens_details: { reasoning_tokens: 290 },
    total_tokens: 340,
  },
};

/** A compatible server that knows only Chat Completions. */
const CHAT_ANSWER = {
  id: 'chatcmpl-local',
  object: 'chat.completion',
  created: 1_767_225_000,
  model: 'llama-local',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Local.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
};

/** A question long enough that its estimate covers the 40 input tokens the answer reports. */
const QUESTION = `What is the capital of France? ${'Answer in one word, please. '.repeat(12)}`;

/**
 * A Responses request to an `openai` target that serves the Responses API goes as it came:
 * `reasoning`, `include`, `text.verbosity` and earlier reasoning items with their
 * `encrypted_content` reach the model, its answer (reasoning items included) reaches the client,
 * and the reasoning tokens are charged. A compatible server gets Chat Completions, and a failover
 * to a target that does not speak it gets the translation.
 */
describe('the Responses API to an OpenAI target, as sent', () => {
  let openai: Upstream;
  let down: Upstream;
  let local: Upstream;
  let app: TestApp;

  beforeEach(async () => {
    openai = await Upstream.start(json(200, REASONED));
    down = await Upstream.start(json(503, { error: { message: 'overloaded', type: 'server_error' } }));
    local = await Upstream.start(json(200, CHAT_ANSWER));
    const native = (server: Upstream) => ({
      provider: 'openai',
      model: 'gpt-5',
      baseUrl: server.url('/v1'),
      apiKey: PROVIDER_KEY,
      // Loopback stands in for api.openai.com, whose targets speak it without saying so.
      responsesApi: true,
    });
    const route = (...targets: object[]) => ({ lane: 'llm', retry: NO_RETRY, targets });
    app = await createTestApp({
      auth: { allowAnonymous: false, apiKeys: [ACME.apiKey] },
      lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
      llm: {
        routes: {
          gpt5: route(native(openai)),
          'gpt5-or-fake': route(native(down), { provider: 'fake', model: 'fake-backup' }),
          local: route({ provider: 'openai', model: 'llama-local', baseUrl: local.url('/v1') }),
        },
        prices: {
          'openai/gpt-5': PRICE,
          'openai/llama-local': PRICE,
          'fake/fake-backup': PRICE,
        },
      },
    });
  });

  afterEach(async () => {
    await app.close();
    await Promise.all([openai.close(), down.close(), local.close()]);
  });

  const client = () => new OpenAI({ apiKey: ACME.key, baseURL: `${app.url}/v1`, maxRetries: 0 });
  const sentBody = (server: Upstream, index = 0) => JSON.parse(server.requests[index].body) as Record<string, unknown>;

  it("sends reasoning, include and text as they came, and answers with the model's reasoning, charged", async () => {
    const { data: answer, response } = await client()
      .responses.create({
        model: 'gpt5',
        input: QUESTION,
        reasoning: { effort: 'high' },
        include: ['reasoning.encrypted_content'],
        text: { verbosity: 'low' },
        max_output_tokens: 1000,
      })
      .withResponse();

    expect(openai.requests).toHaveLength(1);
    expect(openai.requests[0].path).toBe('/v1/responses');
    expect(openai.requests[0].headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    expect(sentBody(openai)).toEqual({
      model: 'gpt-5',
      input: QUESTION,
      reasoning: { effort: 'high' },
      include: ['reasoning.encrypted_content'],
      text: { verbosity: 'low' },
      max_output_tokens: 1000,
      store: false,
      stream: false,
    });
    expect(answer.output[0]).toEqual(REASONED.output[0]);
    expect(answer.output_text).toBe('Paris.');
    expect(answer.id).toMatch(/^resp_/);
    expect(answer.id).not.toBe(REASONED.id);
    expect(answer.output[1].id).not.toBe('msg_upstream_1');
    expect(answer.usage).toEqual(REASONED.usage);
    expect(answer).toMatchObject({ text: { verbosity: 'low' }, reasoning: { effort: 'high' } });
    const bulkhead = (answer as unknown as { bulkhead: { costUsd: number; servedBy: string } }).bulkhead;
    expect(bulkhead.servedBy).toBe('openai/gpt-5');
    expect(bulkhead.costUsd).toBeCloseTo(COST_USD, 9);
    expect(Number(response.headers.get('x-bulkhead-cost-usd'))).toBeCloseTo(COST_USD, 6);
  });

  it('passes earlier reasoning back with its encrypted content, by its own id, and the rest without ids', async () => {
    const first = await client().responses.create({
      model: 'gpt5',
      input: QUESTION,
      include: ['reasoning.encrypted_content'],
      store: false,
    });
    await client().responses.create({
      model: 'gpt5',
      input: [
        { role: 'user', content: QUESTION },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { role: 'user', content: 'And of Spain?' },
      ],
      include: ['reasoning.encrypted_content'],
      store: false,
    });

    const input = sentBody(openai, 1).input as Array<Record<string, unknown>>;
    expect(input[1]).toEqual({ type: 'reasoning', id: 'rs_upstream_1', summary: [], encrypted_content: ENCRYPTED });
    expect(input[2]).toMatchObject({ type: 'message', role: 'assistant' });
    expect(input[2].id).toBeUndefined();
  });

  it('keeps the native answer, encrypted reasoning included, for the next request that names it', async () => {
    // As the Agents SDK and the Vercel AI SDK ask by default: kept, continued by its id, no include.
    const first = await client().responses.create({ model: 'gpt5', input: QUESTION, store: true });
    expect((first as unknown as { store: boolean }).store).toBe(true);
    await client().responses.create({ model: 'gpt5', previous_response_id: first.id, input: 'And of Spain?' });

    // A reasoning model that keeps nothing is always asked for what it can read its reasoning back by.
    expect(sentBody(openai, 0).include).toEqual(['reasoning.encrypted_content']);
    const sent = sentBody(openai, 1);
    expect(sent.previous_response_id).toBeUndefined();
    expect(sent.store).toBe(false);
    const input = sent.input as Array<Record<string, unknown>>;
    expect(input.map((item) => item.type ?? item.role)).toEqual(['message', 'reasoning', 'message', 'message']);
    expect(input[1]).toMatchObject({ id: 'rs_upstream_1', encrypted_content: ENCRYPTED });
  });

  it('answers again from the cache as the target answered, keyed on what only the Responses API says', async () => {
    const request = { model: 'gpt5', input: QUESTION, reasoning: { effort: 'high' as const }, max_output_tokens: 1000 };
    await client().responses.create(request);
    const again = await client().responses.create(request);
    await client().responses.create({ ...request, reasoning: { effort: 'low' } });

    expect(openai.requests).toHaveLength(2);
    expect(again.output[0]).toEqual(REASONED.output[0]);
    expect(again).toMatchObject({ bulkhead: { fromCache: true } });
  });

  it('streams a cached native answer to the same request streamed, as the target would have', async () => {
    const request = { model: 'gpt5', input: QUESTION, reasoning: { effort: 'high' as const }, max_output_tokens: 1000 };
    await client().responses.create(request);
    const stream = client().responses.stream(request);
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    const final = await stream.finalResponse();

    expect(text).toBe('Paris.');
    expect(final.output[0]).toEqual(REASONED.output[0]);
    expect(final).toMatchObject({ bulkhead: { fromCache: true } });
    expect(openai.requests.map((sent) => sent.path)).toEqual(['/v1/responses']);
  });

  it('refuses an Idempotency-Key sent again with another reasoning effort', async () => {
    const options = { headers: { 'idempotency-key': 'native-responses-1' } };
    await client().responses.create({ model: 'gpt5', input: 'Hello', reasoning: { effort: 'high' } }, options);
    const other = await client()
      .responses.create({ model: 'gpt5', input: 'Hello', reasoning: { effort: 'low' } }, options)
      .then(
        () => undefined,
        (error: unknown) => error,
      );

    expect(other).toBeInstanceOf(OpenAI.APIError);
    expect((other as InstanceType<typeof OpenAI.APIError>).status).toBe(422);
    expect(openai.requests).toHaveLength(1);
  });

  it('fails over from the native target to one that gets the translation', async () => {
    const answer = await client().responses.create({
      model: 'gpt5-or-fake',
      input: 'Hello',
      reasoning: { effort: 'high' },
      include: ['reasoning.encrypted_content'],
    });

    expect(down.requests.map((request) => request.path)).toEqual(['/v1/responses']);
    expect(answer.output_text.length).toBeGreaterThan(0);
    expect(answer.output.map((item) => item.type)).toEqual(['message']);
    expect((answer as unknown as { bulkhead: { servedBy: string } }).bulkhead.servedBy).toBe('fake/fake-backup');
  });

  it('sends Chat Completions to a compatible server that does not say it serves Responses', async () => {
    const answer = await client().responses.create({ model: 'local', input: 'Hello', reasoning: { effort: 'low' } });

    expect(local.requests.map((request) => request.path)).toEqual(['/v1/chat/completions']);
    expect(answer.output_text).toBe('Local.');
  });
});
