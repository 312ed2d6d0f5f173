import Anthropic from '@anthropic-ai/sdk';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, ModelRefusalError, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import type { ServerResponse } from 'node:http';
import { createTestApp, type TestApp } from '../support/create-app';
import { openaiRefusal } from '../support/llm-answers';
import { openaiRefusalChunks, streamed } from '../support/sse';
import { testTenant } from '../support/tenants';
import { json, Upstream, type UpstreamRequest } from '../support/upstream';

const ACME = testTenant('acme');
const REFUSAL = "I'm sorry, I can't help with that.";
const PIECES = ["I'm sorry, ", "I can't help ", 'with that.'];
const PRICE = { inputPerMTokUsd: 1, outputPerMTokUsd: 1 };
/** 12 tokens in and 7 out at $1 per million each: what a refusal's answer is charged, as any answer. */
const REFUSAL_COST_USD = 0.000019;

/** A model server that refuses as OpenAI's Chat Completions API does: `message.refusal`, or `delta.refusal` pieces. */
function refusingModel(model: string) {
  return (request: UpstreamRequest, response: ServerResponse) => {
    const answer = (JSON.parse(request.body) as { stream?: boolean }).stream
      ? streamed(openaiRefusalChunks(PIECES, { model }))
      : json(200, openaiRefusal(REFUSAL, undefined, model));
    return answer(request, response);
  };
}

/**
 * A target's refusal reaches the clients of every ingress as their own API says one: a `refusal`
 * part of the Responses message (streamed as its refusal events), `stop_reason: "refusal"` with
 * the text on the Messages API, charged as any answer, never cached, and replayed the same for
 * an `Idempotency-Key`. The agent runtimes' defaults see it as their own refusal. (A Claude
 * target's own refusal: refusals-native.e2e-spec.ts.)
 */
describe('refusals, through every ingress', () => {
  let app: TestApp;
  let gpt: Upstream;

  beforeAll(async () => {
    setTracingDisabled(true);
    gpt = await Upstream.start(refusingModel('gpt-refusing'));
    const refusing = { provider: 'openai', model: 'gpt-refusing', baseUrl: gpt.url('/v1') };
    app = await createTestApp({
      auth: { allowAnonymous: false, apiKeys: [ACME.apiKey] },
      lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
      llm: {
        routes: {
          refusing: { lane: 'llm', targets: [refusing] },
          'refusing-cached': { lane: 'llm', cache: true, targets: [refusing] },
        },
        prices: { 'openai/gpt-refusing': PRICE },
      },
    });
  });

  afterAll(async () => {
    await app?.close();
    await gpt.close();
  });

  const openai = () => new OpenAI({ baseURL: `${app.url}/v1`, apiKey: ACME.key, maxRetries: 0 });
  const anthropic = () => new Anthropic({ baseURL: app.url, apiKey: ACME.key, maxRetries: 0 });
  const ask = (text: string) => [{ role: 'user' as const, content: text }];
  const refusalPart = { type: 'refusal', refusal: REFUSAL };

  describe("OpenAI's Responses API", () => {
    it('answers responses.create with a message whose part is the refusal; output_text is empty', async () => {
      const response = await openai().responses.create({ model: 'refusing', input: 'do the bad thing' });

      expect(response).toMatchObject({
        status: 'completed',
        output: [{ type: 'message', role: 'assistant', status: 'completed', content: [refusalPart] }],
        usage: { input_tokens: 12, output_tokens: 7 },
        bulkhead: { servedBy: 'openai/gpt-refusing', costUsd: REFUSAL_COST_USD },
      });
      expect(response.output_text).toBe('');
    });

    it('streams the refusal events with stream: true, and the part in response.completed', async () => {
      const stream = await openai().responses.create({ model: 'refusing', input: 'do the bad thing', stream: true });
      const types: string[] = [];
      const deltas: string[] = [];
      let completed: OpenAI.Responses.Response | undefined;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.refusal.delta') deltas.push(event.delta);
        if (event.type === 'response.completed') completed = event.response;
      }

      expect(types).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        ...PIECES.map(() => 'response.refusal.delta'),
        'response.refusal.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(deltas).toEqual(PIECES);
      expect(completed?.output).toEqual([expect.objectContaining({ type: 'message', content: [refusalPart] })]);
      expect(completed).toMatchObject({ usage: { output_tokens: 7 }, bulkhead: { costUsd: REFUSAL_COST_USD } });
    });

    it("builds the refusal part in the SDK's stream helper, which checks each event against the item it built", async () => {
      const stream = openai().responses.stream({ model: 'refusing', input: 'do the bad thing' });
      let done: string | undefined;
      stream.on('response.refusal.done', (event) => (done = event.refusal));
      const response = await stream.finalResponse();

      expect(done).toBe(REFUSAL);
      expect(response.output_text).toBe('');
      expect(response.output[0]).toMatchObject({ type: 'message', content: [refusalPart] });
    });

    it('takes the refused answer back as input of the next turn, as agent SDKs send it', async () => {
      const client = openai();
      const first = await client.responses.create({ model: 'refusing', input: 'do the bad thing' });
      const sentBefore = gpt.requests.length;

      await client.responses.create({
        model: 'refusing',
        input: [
          { role: 'user', content: 'do the bad thing' },
          ...(first.output as OpenAI.Responses.ResponseInputItem[]),
          { role: 'user', content: 'then something else' },
        ],
      });

      const sent = JSON.parse(gpt.requests[sentBefore].body) as { messages: Array<{ role: string; content: unknown }> };
      expect(sent.messages[1]).toMatchObject({ role: 'assistant' });
      expect(JSON.stringify(sent.messages[1].content)).toContain(REFUSAL);
    });

    it('never caches a refusal, a moderation outcome that may not hold next time: each repeat asks the target', async () => {
      const client = openai();
      const sentBefore = gpt.requests.length;
      const first = await client.responses.create({ model: 'refusing-cached', input: 'cache the refusal' });
      const again = await client.responses.create({ model: 'refusing-cached', input: 'cache the refusal' });

      expect(gpt.requests).toHaveLength(sentBefore + 2);
      expect(first.output[0]).toMatchObject({ content: [refusalPart] });
      expect(itemsOf(again)).toEqual(itemsOf(first));
      expect(again).toMatchObject({ bulkhead: { fromCache: false } });
    });

    it('replays a refusal for a repeated Idempotency-Key as the same answer, whole and streamed', async () => {
      const client = openai();
      const keyed = (key: string) => ({ headers: { 'idempotency-key': key } });
      const request = { model: 'refusing', input: 'refuse me once' };
      const sentBefore = gpt.requests.length;
      const first = await client.responses.create(request, keyed('refusal-whole'));
      const again = await client.responses.create(request, keyed('refusal-whole'));
      const streamedFirst = await client.responses.stream(request, keyed('refusal-streamed')).finalResponse();
      const streamedAgain = await client.responses.stream(request, keyed('refusal-streamed')).finalResponse();

      expect(gpt.requests).toHaveLength(sentBefore + 2);
      expect(itemsOf(again)).toEqual(itemsOf(first));
      // The SDK's stream helper adds `parsed: null` to each part: a stream is compared with a stream.
      expect(streamedFirst.output[0]).toMatchObject({ content: [refusalPart] });
      expect(itemsOf(streamedAgain)).toEqual(itemsOf(streamedFirst));
      expect([again, streamedAgain]).toEqual([
        expect.objectContaining({ bulkhead: expect.objectContaining({ replayed: true }) }),
        expect.objectContaining({ bulkhead: expect.objectContaining({ replayed: true }) }),
      ]);
    });
  });

  describe("the Vercel AI SDK's default provider (the Responses API)", () => {
    const vercel = () => createOpenAI({ baseURL: `${app.url}/v1`, apiKey: ACME.key })('refusing');

    it('generates the refusal as its text, finished by content-filter', async () => {
      const { text, finishReason } = await generateText({ model: vercel(), prompt: 'do the bad thing', maxRetries: 0 });

      expect([text, finishReason]).toEqual([REFUSAL, 'content-filter']);
    });

    it('streams the refusal as its text, finished by content-filter', async () => {
      const result = streamText({ model: vercel(), prompt: 'do the bad thing', maxRetries: 0 });
      let text = '';
      for await (const piece of result.textStream) text += piece;

      expect([text, await result.finishReason]).toEqual([REFUSAL, 'content-filter']);
    });
  });

  describe("the OpenAI Agents SDK's default model (the Responses API)", () => {
    it('ends the run with its ModelRefusalError, carrying the refusal', async () => {
      const agent = new Agent({ name: 'Refused', instructions: 'Answer.', model: 'refusing' });
      const runner = new Runner({
        modelProvider: new OpenAIProvider({
          openAIClient: new OpenAI({ baseURL: `${app.url}/v1`, apiKey: ACME.key, maxRetries: 0 }),
        }),
      });

      const failure = await runner.run(agent, 'do the bad thing').catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(ModelRefusalError);
      expect((failure as ModelRefusalError).refusal).toBe(REFUSAL);
    });
  });

  describe("Anthropic's Messages API, translated", () => {
    it('answers messages.create with stop_reason refusal and the refusal as text', async () => {
      const message = await anthropic().messages.create({
        model: 'refusing',
        max_tokens: 100,
        messages: ask('do the bad thing'),
      });

      expect(message).toMatchObject({
        content: [{ type: 'text', text: REFUSAL }],
        stop_reason: 'refusal',
        usage: { input_tokens: 12, output_tokens: 7 },
        bulkhead: { costUsd: REFUSAL_COST_USD },
      });
    });

    it('streams the refusal as a text block and a message_delta that says refusal', async () => {
      const stream = anthropic().messages.stream({ model: 'refusing', max_tokens: 100, messages: ask('bad thing') });
      const texts: string[] = [];
      stream.on('text', (text) => texts.push(text));
      const message = await stream.finalMessage();

      expect(texts).toEqual(PIECES);
      expect(message.content).toEqual([{ type: 'text', text: REFUSAL }]);
      expect(message.stop_reason).toBe('refusal');
    });

    it('replays a refusal for a repeated Idempotency-Key as the same message, whole and streamed', async () => {
      const client = anthropic();
      const keyed = (key: string) => ({ headers: { 'idempotency-key': key } });
      const request = { model: 'refusing', max_tokens: 100, messages: ask('refuse me once') };
      const sentBefore = gpt.requests.length;
      const first = await client.messages.create(request, keyed('messages-refusal-whole'));
      const again = await client.messages.create(request, keyed('messages-refusal-whole'));
      await client.messages.stream(request, keyed('messages-refusal-streamed')).finalMessage();
      const replayed = await client.messages.stream(request, keyed('messages-refusal-streamed')).finalMessage();

      expect(gpt.requests).toHaveLength(sentBefore + 2);
      expect(again).toMatchObject({ content: first.content, stop_reason: 'refusal', bulkhead: { replayed: true } });
      expect(replayed).toMatchObject({ content: first.content, stop_reason: 'refusal' });
    });
  });
});

/** A response's output items without their ids, which are each call's own. */
function itemsOf(response: OpenAI.Responses.Response): unknown[] {
  return response.output.map(({ id: _id, ...item }) => item);
}
