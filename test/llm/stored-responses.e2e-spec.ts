import type { ServerResponse } from 'node:http';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool as agentTool } from '@openai/agents';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { errorOf } from '../support/llm-ingress-app';
import { closeRedis, connectRedis, deleteKeysUnder, keysUnder, SHARED_REDIS_URL, uniquePrefix } from '../support/redis';
import { describeRedis } from '../support/redis-availability';
import { testTenant } from '../support/tenants';
import { Upstream, type UpstreamRequest } from '../support/upstream';

const ACME = testTenant('acme');
const OTHER = testTenant('other');

interface ChatBody {
  stream?: boolean;
  messages: Array<{ role: string; content: unknown; tool_calls?: unknown[] }>;
}

/**
 * A model server as OpenAI's chat API answers: asked without a tool result, it writes a line of
 * text AND calls `get_weather` (what makes the Vercel AI SDK send an item_reference in step 2);
 * with one, it answers the weather; 'a plain question' gets a plain text answer. Streamed when asked, with the usage chunk.
 */
function weatherModel(request: UpstreamRequest, response: ServerResponse): void {
  const body = JSON.parse(request.body) as ChatBody;
  if (request.body.includes('cut me short')) return cutShort(response);
  const toolResult = body.messages.some((message) => message.role === 'tool');
  const usage = { prompt_tokens: 30, completion_tokens: 10, total_tokens: 40 };
  const call = { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
  const plain = request.body.includes('a plain question');
  const message = plain
    ? { role: 'assistant', content: 'A plain answer.' }
    : toolResult
      ? { role: 'assistant', content: 'Sunny in Paris.' }
      : { role: 'assistant', content: 'Let me check the weather.', tool_calls: [call] };
  const finish = plain || toolResult ? 'stop' : 'tool_calls';
  const base = { id: 'chatcmpl-w', created: 1_767_225_600, model: 'gpt-4o-mini' };
  if (!body.stream) {
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
        usage,
      }),
    );
    return;
  }
  const chunk = (choices: unknown[], extra: object = {}) =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`;
  const events = [
    chunk([{ index: 0, delta: { role: 'assistant', content: message.content } }]),
    ...(toolResult ? [] : [chunk([{ index: 0, delta: { tool_calls: [{ index: 0, ...call }] } }])]),
    chunk([{ index: 0, delta: {}, finish_reason: finish }]),
    chunk([], { usage }),
    'data: [DONE]\n\n',
  ];
  response.writeHead(200, { 'content-type': 'text/event-stream' }).end(events.join(''));
}

/** A stream whose connection drops after its first content, with no end. */
function cutShort(response: ServerResponse): void {
  const chunk = { id: 'chatcmpl-c', object: 'chat.completion.chunk', created: 1_767_225_600, model: 'gpt-4o-mini' };
  const first = { ...chunk, choices: [{ index: 0, delta: { role: 'assistant', content: 'Half an' } }] };
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.write(`data: ${JSON.stringify(first)}\n\n`, () => response.destroy());
}

const weatherTool = (calls: string[]) =>
  tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return { city, celsius: 21 };
    },
  });

function documentFor(upstream: Upstream, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    auth: { allowAnonymous: false, apiKeys: [ACME.apiKey, OTHER.apiKey] },
    lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
    llm: {
      routes: {
        weather: {
          lane: 'llm',
          targets: [{ provider: 'openai', model: 'gpt-4o-mini', baseUrl: upstream.url('/v1'), apiKey: 'sk-test' }],
        },
      },
      prices: { 'openai/gpt-4o-mini': { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } },
    },
    ...extra,
  };
}

/** What the model server was asked, each request's messages. */
const askedMessages = (upstream: Upstream) =>
  upstream.requests.map((request) => (JSON.parse(request.body) as ChatBody).messages);

/** The response's `store` field, which the SDK's type leaves out. */
const storeOf = (response: OpenAI.Responses.Response) => (response as unknown as { store: unknown }).store;

const client = (app: TestApp, key: string) => new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 });

/**
 * Kept responses: the defaults of the Vercel AI SDK (`store` true, item references) and the
 * Agents SDK (`previousResponseId`) resolve against what the service answered before.
 */
describe.each(PLATFORMS)('stored responses (previous_response_id, item_reference), on %s', (platform) => {
  let upstream: Upstream;
  let app: TestApp;

  beforeAll(async () => {
    setTracingDisabled(true);
    upstream = await Upstream.start(weatherModel);
    app = await createTestApp(documentFor(upstream), { platform });
  });

  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  beforeEach(() => {
    upstream.requests.length = 0;
  });

  const vercel = () => createOpenAI({ baseURL: `${app.url}/v1`, apiKey: ACME.key });

  it("runs the Vercel AI SDK's default two-step tool loop, step 1 text and a tool call, its item_reference resolved", async () => {
    const calls: string[] = [];
    const sent: unknown[] = [];
    const recording: typeof fetch = (input, init) => {
      sent.push(JSON.parse(String(init?.body)));
      return fetch(input, init);
    };
    const openai = createOpenAI({ baseURL: `${app.url}/v1`, apiKey: ACME.key, fetch: recording });

    const { text, steps } = await generateText({
      model: openai('weather'),
      prompt: 'What is the weather in Paris?',
      tools: { get_weather: weatherTool(calls) },
      stopWhen: stepCountIs(2),
    });

    expect(calls).toEqual(['Paris']);
    expect(steps).toHaveLength(2);
    expect(steps[0].text).toBe('Let me check the weather.');
    expect(text).toBe('Sunny in Paris.');
    // The SDK's default sent a reference to the message it got in step 1 ...
    expect(JSON.stringify((sent[1] as { input: unknown }).input)).toContain('"item_reference"');
    // ... and the model saw that message's text, in the one assistant turn with its call.
    expect(askedMessages(upstream)[1]).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }] },
      {
        role: 'assistant',
        content: 'Let me check the weather.',
        tool_calls: [
          { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_w1', content: expect.stringContaining('21') },
    ]);
  });

  it('keeps a streamed response once complete: the same loop through streamText', async () => {
    const calls: string[] = [];
    const result = streamText({
      model: vercel()('weather'),
      // Not the question of the test before, whose answers the exact cache holds.
      prompt: 'What is the weather in Paris, streamed?',
      tools: { get_weather: weatherTool(calls) },
      stopWhen: stepCountIs(2),
    });

    expect(await result.text).toBe('Sunny in Paris.');
    expect((await result.steps)[0].text).toBe('Let me check the weather.');
    expect(calls).toEqual(['Paris']);
    expect(askedMessages(upstream)[1][1]).toMatchObject({ role: 'assistant', content: 'Let me check the weather.' });
  });

  it("continues an Agents SDK run from its previousResponseId, the earlier turn's items before the new input", async () => {
    const getWeather = agentTool({
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => `21 C in ${city}`,
    });
    const agent = new Agent({
      name: 'Weather',
      instructions: 'Answer about the weather.',
      tools: [getWeather],
      model: 'weather',
    });
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ openAIClient: client(app, ACME.key) }),
    });

    const first = await runner.run(agent, 'What is the weather in Paris?');
    upstream.requests.length = 0;
    const second = await runner.run(agent, 'And tomorrow?', { previousResponseId: first.lastResponseId });

    expect(first.finalOutput).toBe('Sunny in Paris.');
    expect(second.lastResponseId).toMatch(/^resp_/);
    const seen = askedMessages(upstream)[0];
    expect(seen[0]).toEqual({ role: 'system', content: 'Answer about the weather.' });
    expect(seen.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(seen.at(-2)).toEqual({ role: 'assistant', content: 'Sunny in Paris.' });
    expect(seen.at(-1)).toEqual({ role: 'user', content: 'And tomorrow?' });
  });

  it('keeps nothing of a stream cut short', async () => {
    const stream = await client(app, ACME.key).responses.create({
      model: 'weather',
      input: 'cut me short',
      stream: true,
    });
    let id = '';
    const types: string[] = [];
    const failed = await (async () => {
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.created') id = event.response.id;
      }
    })().then(
      () => undefined,
      (error: unknown) => error,
    );

    const error = await errorOf(
      client(app, ACME.key).responses.create({ model: 'weather', input: 'x', previous_response_id: id }),
    );

    expect(failed).toBeInstanceOf(OpenAI.APIError);
    expect(id).toMatch(/^resp_/);
    expect(types).not.toContain('response.completed');
    expect(error).toMatchObject({ status: 400, code: 'previous_response_not_found' });
  });

  it('lets the exact cache see the request as resolved: an item reference and the item itself are one question', async () => {
    const openai = client(app, ACME.key);
    const first = await openai.responses.create({ model: 'weather', input: 'a plain question for the cache' });
    const message = first.output.find((item) => item.type === 'message')!;
    const asked = [{ role: 'user' as const, content: 'and then?' }];

    const inFull = await openai.responses.create({
      model: 'weather',
      input: [{ role: 'user', content: 'a plain question for the cache' }, message, ...asked],
    });
    const byReference = await openai.responses.create({
      model: 'weather',
      input: [
        { role: 'user', content: 'a plain question for the cache' },
        { type: 'item_reference', id: message.id! },
        ...asked,
      ],
    });

    expect(inFull).toMatchObject({ bulkhead: { fromCache: false } });
    expect(byReference).toMatchObject({ bulkhead: { fromCache: true } });
  });

  it('says the truth in store and previous_response_id', async () => {
    const openai = client(app, ACME.key);

    const kept = await openai.responses.create({ model: 'weather', input: 'hi' });
    const next = await openai.responses.create({ model: 'weather', input: 'more', previous_response_id: kept.id });
    const unkept = await openai.responses.create({ model: 'weather', input: 'hi', store: false });

    expect([storeOf(kept), kept.previous_response_id]).toEqual([true, null]);
    expect([storeOf(next), next.previous_response_id]).toEqual([true, kept.id]);
    expect(storeOf(unkept)).toBe(false);
  });

  it("keeps nothing with store false: naming that response is OpenAI's not-found", async () => {
    const openai = client(app, ACME.key);
    const unkept = await openai.responses.create({ model: 'weather', input: 'hi', store: false });

    const error = await errorOf(
      openai.responses.create({ model: 'weather', input: 'x', previous_response_id: unkept.id }),
    );

    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({
      status: 400,
      code: 'previous_response_not_found',
      param: 'previous_response_id',
      message: expect.stringContaining(`Previous response with id '${unkept.id}' not found.`),
    });
  });

  it("refuses an unknown id and an unknown item with OpenAI's errors, through the openai SDK", async () => {
    const openai = client(app, ACME.key);

    const response = await errorOf(
      openai.responses.create({ model: 'weather', input: 'x', previous_response_id: 'resp_never' }),
    );
    const item = await errorOf(
      openai.responses.create({ model: 'weather', input: [{ type: 'item_reference', id: 'msg_never' }] }),
    );

    expect(response).toMatchObject({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id' });
    expect(item).toMatchObject({
      status: 400,
      param: 'input',
      message: expect.stringContaining("Item with id 'msg_never' not found."),
    });
    expect(upstream.requests).toHaveLength(0);
  });

  it("refuses tenant A's response and items to tenant B", async () => {
    const kept = await client(app, ACME.key).responses.create({ model: 'weather', input: 'weather?' });
    const message = kept.output.find((item) => item.type === 'message')!;

    const response = await errorOf(
      client(app, OTHER.key).responses.create({ model: 'weather', input: 'x', previous_response_id: kept.id }),
    );
    const item = await errorOf(
      client(app, OTHER.key).responses.create({
        model: 'weather',
        input: [{ type: 'item_reference', id: message.id! }],
      }),
    );

    expect(response).toMatchObject({ status: 400, code: 'previous_response_not_found' });
    expect(item).toMatchObject({ status: 400, param: 'input' });
    await expect(
      client(app, ACME.key).responses.create({ model: 'weather', input: 'x', previous_response_id: kept.id }),
    ).resolves.toMatchObject({ previous_response_id: kept.id });
  });
});

describe('a response too large to keep', () => {
  let upstream: Upstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await Upstream.start(weatherModel);
    const document = documentFor(upstream);
    (document.llm as Record<string, unknown>).responses = { stored: { maxResponseBytes: 1024 } };
    app = await createTestApp(document);
  });

  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  it('says store false, whole or streamed, and is not found later', async () => {
    const openai = client(app, ACME.key);
    const input = `a plain question ${'x'.repeat(2_000)}`;

    const whole = await openai.responses.create({ model: 'weather', input });
    const stream = await openai.responses.create({ model: 'weather', input, stream: true });
    let streamed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') streamed = event.response;
    const small = await openai.responses.create({ model: 'weather', input: 'a plain question' });
    const later = await errorOf(
      openai.responses.create({ model: 'weather', input: 'x', previous_response_id: whole.id }),
    );

    expect(whole.output_text).toBe('A plain answer.');
    expect([storeOf(whole), storeOf(streamed!), storeOf(small)]).toEqual([false, false, true]);
    expect(later).toMatchObject({ status: 400, code: 'previous_response_not_found' });
  });
});

describe('stored responses turned off', () => {
  let upstream: Upstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await Upstream.start(weatherModel);
    const document = documentFor(upstream);
    (document.llm as Record<string, unknown>).responses = { stored: { enabled: false } };
    app = await createTestApp(document);
  });

  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  it('answers store false, and refuses a reference saying how to turn it on or do without', async () => {
    const openai = client(app, ACME.key);
    const answered = await openai.responses.create({ model: 'weather', input: 'hi' });

    const error = await errorOf(
      openai.responses.create({ model: 'weather', input: 'x', previous_response_id: answered.id }),
    );

    expect(storeOf(answered)).toBe(false);
    expect(error).toMatchObject({
      status: 400,
      message: expect.stringContaining('llm.responses.stored.enabled is false'),
    });
  });
});

describeRedis('stored responses on two replicas sharing Redis', () => {
  let upstream: Upstream;
  let replicas: TestApp[] = [];
  let prefix: string;

  beforeAll(async () => {
    prefix = uniquePrefix('bh-stored');
    upstream = await Upstream.start(weatherModel);
    const document = documentFor(upstream, {
      store: { kind: 'redis', url: SHARED_REDIS_URL, prefix, commandTimeoutMs: 2_000 },
    });
    replicas = [await createTestApp(document), await createTestApp(document)];
  });

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    await upstream.close();
    const redis = await connectRedis();
    await deleteKeysUnder(redis, prefix);
    await closeRedis(redis);
  });

  it('resolves on one replica what the other kept: a previous response, and an item (streamed)', async () => {
    const [one, other] = replicas;
    const kept = await client(one, ACME.key).responses.create({ model: 'weather', input: 'weather?' });
    const stream = await client(one, ACME.key).responses.create({ model: 'weather', input: 'weather?', stream: true });
    let streamed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') streamed = event.response;
    const message = streamed!.output.find((item) => item.type === 'message')!;

    const next = await client(other, ACME.key).responses.create({
      model: 'weather',
      input: 'and tomorrow?',
      previous_response_id: kept.id,
    });
    const referenced = await client(other, ACME.key).responses.create({
      model: 'weather',
      input: [
        { type: 'item_reference', id: message.id! },
        { role: 'user', content: 'thanks' },
      ],
    });

    expect(next.previous_response_id).toBe(kept.id);
    expect(referenced.status).toBe('completed');
    const messages = askedMessages(upstream);
    expect(messages.at(-2)!.map((entry) => entry.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages.at(-1)![0]).toMatchObject({ role: 'assistant', content: 'Let me check the weather.' });
    const redis = await connectRedis();
    const keys = await keysUnder(redis, prefix);
    await closeRedis(redis);
    expect(keys.some((key) => key.includes(`{acme:${kept.id}}`))).toBe(true);
  });
});
