import type { ServerResponse } from 'node:http';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool as agentTool } from '@openai/agents';
import { stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import {
  CALLING_EVENTS,
  ENCRYPTED,
  REASONED_ANSWER,
  REASONED_EVENTS,
  responsesSse,
  textAnswerEvents,
} from '../support/responses-stream';
import { testTenant } from '../support/tenants';
import { json, Upstream, type UpstreamRequest } from '../support/upstream';

const ACME = testTenant('acme');
const NO_RETRY = { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 };
/** Prices that make each kind of token's charge visible in the cost: cached input, input, output. */
const PRICE = { inputPerMTokUsd: 1000, cachedInputPerMTokUsd: 100, outputPerMTokUsd: 10_000 };
/** 32 uncached and 8 cached input tokens, 300 output tokens of which 290 reasoning. */
const COST_USD = 32 * 0.001 + 8 * 0.0001 + 300 * 0.01;
/** A question long enough that its estimate covers the 40 input tokens the answers report. */
const QUESTION = `What is the capital of France? ${'Answer in one word, please. '.repeat(12)}`;

interface ResponsesBody {
  stream?: boolean;
  input: unknown;
}

/**
 * OpenAI's Responses API, streamed as OpenAI streams it: asked for the weather without a tool's
 * result, it reasons, says a sentence and calls `weather`; with one, it answers; anything else
 * it reasons and answers "Paris.". A question that asks for it is answered with a broken event
 * after its first text, or a failure before any.
 */
function openAiServer(request: UpstreamRequest, response: ServerResponse): void {
  const body = JSON.parse(request.body) as ResponsesBody;
  if (body.stream !== true) {
    json(200, REASONED_ANSWER)(request, response);
    return;
  }
  const input = JSON.stringify(body.input);
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  if (input.includes('break after text')) {
    response.end(responsesSse([...REASONED_EVENTS.slice(0, 12), { type: 'response.output_text.delta', delta: 7 }]));
  } else if (input.includes('fail at once')) {
    const failed = { ...REASONED_ANSWER, status: 'failed', error: { code: 'server_error', message: 'boom' } };
    response.end(responsesSse([REASONED_EVENTS[0], { type: 'response.failed', response: failed }]));
  } else if (input.includes('function_call_output')) {
    response.end(responsesSse(textAnswerEvents(['Sunny ', 'in Paris.'])));
  } else if (input.includes('weather')) {
    response.end(responsesSse(CALLING_EVENTS));
  } else {
    response.end(responsesSse(REASONED_EVENTS));
  }
}

/**
 * A streamed Responses request to an `openai` target that serves the Responses API goes as it
 * came, `stream: true`: the target's events reach the client as it sent them (reasoning and its
 * `encrypted_content` included), named by Bulkhead's ids, the end carrying the usage charged;
 * the SDKs that stream by default run their tool loops through it, kept responses and all.
 */
describe.each(PLATFORMS)('the Responses API to an OpenAI target, streamed as sent, on %s', (platform) => {
  let openai: Upstream;
  let app: TestApp;

  beforeAll(async () => {
    setTracingDisabled(true);
    openai = await Upstream.start(openAiServer);
    const native = {
      provider: 'openai',
      model: 'gpt-5',
      baseUrl: openai.url('/v1'),
      apiKey: 'sk-p',
      responsesApi: true,
    };
    app = await createTestApp(
      {
        auth: { allowAnonymous: false, apiKeys: [ACME.apiKey] },
        lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
        llm: {
          routes: {
            gpt5: { lane: 'llm', retry: NO_RETRY, cache: false, targets: [native] },
            'gpt5-or-fake': {
              lane: 'llm',
              retry: NO_RETRY,
              cache: false,
              targets: [native, { provider: 'fake', model: 'backup' }],
            },
          },
          prices: { 'openai/gpt-5': PRICE, 'fake/backup': PRICE },
        },
      },
      { platform },
    );
  });

  afterAll(async () => {
    await app?.close();
    await openai.close();
  });

  beforeEach(() => openai.requests.splice(0));

  const client = () => new OpenAI({ apiKey: ACME.key, baseURL: `${app.url}/v1`, maxRetries: 0 });
  const sent = (index: number) => JSON.parse(openai.requests[index].body) as Record<string, unknown>;

  it("streams the target's events as it sent them, reasoning included, its ids Bulkhead's and its usage charged", async () => {
    const stream = client().responses.stream({ model: 'gpt5', input: QUESTION, reasoning: { effort: 'high' } });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();

    expect(openai.requests[0].path).toBe('/v1/responses');
    expect(sent(0)).toMatchObject({ stream: true, store: false, include: ['reasoning.encrypted_content'] });
    expect(events.map((event) => event.type)).toEqual(REASONED_EVENTS.map((event) => (event as { type: string }).type));
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_event, index) => index));
    const summary = events.filter((event) => event.type === 'response.reasoning_summary_text.delta');
    expect(summary.map((event) => event.delta).join('')).toBe('The user asks for a capital.');
    expect(final.id).toMatch(/^resp_/);
    expect(final.id).not.toBe(REASONED_ANSWER.id);
    expect(final.output[0]).toMatchObject({ type: 'reasoning', id: 'rs_upstream_s1', encrypted_content: ENCRYPTED });
    expect(final.output[1].id).toMatch(/^msg_/);
    expect(final.output[1].id).not.toBe('msg_upstream_s1');
    expect(events.find((event) => event.type === 'response.output_text.delta')).toMatchObject({
      item_id: final.output[1].id,
    });
    expect(final.output_text).toBe('Paris.');
    expect(final.usage).toEqual(REASONED_ANSWER.usage);
    const bulkhead = (final as unknown as { bulkhead: { costUsd: number; servedBy: string } }).bulkhead;
    expect(bulkhead.servedBy).toBe('openai/gpt-5');
    expect(bulkhead.costUsd).toBeCloseTo(COST_USD, 9);
  });

  it("runs the Vercel AI SDK's default two-step tool loop, the kept reasoning sent back with its encrypted content", async () => {
    const calls: string[] = [];
    const vercel = createOpenAI({ baseURL: `${app.url}/v1`, apiKey: ACME.key });
    const result = streamText({
      model: vercel('gpt5'),
      prompt: 'What is the weather in Paris?',
      tools: {
        weather: tool({
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            calls.push(city);
            return { city, celsius: 21 };
          },
        }),
      },
      stopWhen: stepCountIs(2),
    });

    expect(await result.text).toBe('Sunny in Paris.');
    expect((await result.steps)[0].text).toBe('Let me look.');
    expect((await result.steps)[0].reasoningText).toBe('The user asks for a capital.');
    expect(calls).toEqual(['Paris']);
    // Step 2 named step 1's items by reference (`store` is the SDK's default); the target got them whole.
    const input = sent(1).input as Array<Record<string, unknown>>;
    expect(input.find((item) => item.type === 'reasoning')).toMatchObject({ encrypted_content: ENCRYPTED });
    expect(input.find((item) => item.type === 'function_call')).toMatchObject({ call_id: 'call_weather_1' });
    expect(input.some((item) => item.type === 'item_reference')).toBe(false);
  });

  it('runs a streamed Agents SDK run with a tool to its final output', async () => {
    const weather = agentTool({
      name: 'weather',
      description: 'The weather in a city',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => `21 C in ${city}`,
    });
    const agent = new Agent({ name: 'Weather', instructions: 'Answer.', tools: [weather], model: 'gpt5' });
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ openAIClient: client() }),
    });

    const result = await runner.run(agent, 'What is the weather in Paris?', { stream: true });
    let text = '';
    for await (const piece of result.toTextStream()) text += piece;
    await result.completed;

    expect(result.finalOutput).toBe('Sunny in Paris.');
    expect(text).toContain('Sunny in Paris.');
    expect(openai.requests.map((request) => request.path)).toEqual(['/v1/responses', '/v1/responses']);
  });

  it("ends the client's stream with an error event when the target breaks it after its first text, and goes on serving", async () => {
    const stream = client().responses.stream({ model: 'gpt5', input: 'break after text' });
    const seen: string[] = [];
    const failure = await (async () => {
      for await (const event of stream) seen.push(event.type);
    })().then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(seen).toContain('response.output_text.delta');
    expect(failure).toBeInstanceOf(Error);
    const next = await client().responses.create({ model: 'gpt5', input: QUESTION });
    expect(next.output_text).toBe('Paris.');
  });

  it('fails over to the next target when the stream fails before any content', async () => {
    const stream = client().responses.stream({ model: 'gpt5-or-fake', input: 'fail at once' });
    const final = await stream.finalResponse();

    expect(openai.requests).toHaveLength(1);
    expect(final.output.map((item) => item.type)).toEqual(['message']);
    expect((final as unknown as { bulkhead: { servedBy: string } }).bulkhead.servedBy).toBe('fake/backup');
  });
});
