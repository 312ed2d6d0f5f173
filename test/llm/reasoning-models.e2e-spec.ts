import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createTestApp, type TestApp } from '../support/create-app';
import { openAiParameterChecks } from '../support/openai-parameter-checks';
import { testTenant } from '../support/tenants';
import { json, Upstream, type UpstreamRequest } from '../support/upstream';

const ACME = testTenant('acme');
const NO_RETRY = { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 };

function body(request: UpstreamRequest): Record<string, unknown> {
  return JSON.parse(request.body) as Record<string, unknown>;
}

/**
 * OpenAI's reasoning models (o-series, gpt-5) through every ingress that reaches an `openai`
 * target, with the SDKs as clients and model servers that refuse what OpenAI's API refuses: the
 * output cap goes in the one field each target takes, and what a reasoning model refuses is
 * left out of its request, never a 400 to the client.
 */
describe('reasoning models', () => {
  let o3: Upstream;
  let gpt5: Upstream;
  let gpt4o: Upstream;
  let compatible: Upstream;
  /** A gpt-4o that is overloaded. */
  let down: Upstream;
  let app: TestApp;

  const openai = () => new OpenAI({ apiKey: ACME.key, baseURL: `${app.url}/v1`, maxRetries: 0 });
  const anthropic = () => new Anthropic({ apiKey: ACME.key, baseURL: app.url, maxRetries: 0 });
  const user = (content: string) => [{ role: 'user' as const, content }];

  beforeAll(async () => {
    o3 = await Upstream.start(
      openAiParameterChecks({ text: 'Thought it through.', model: 'o3-mini' }, { reasoning: true }),
    );
    gpt5 = await Upstream.start(openAiParameterChecks({ text: 'Five.', model: 'gpt-5-mini' }, { reasoning: true }));
    gpt4o = await Upstream.start(openAiParameterChecks({ text: 'Four oh.', model: 'gpt-4o' }, { reasoning: false }));
    compatible = await Upstream.start(
      openAiParameterChecks({ text: 'Local.', model: 'llama-3.1-8b' }, { reasoning: false, onlyMaxTokens: true }),
    );
    down = await Upstream.start(json(503, { error: { message: 'overloaded', type: 'server_error' } }));
    const target = (model: string, server: Upstream, extra: Record<string, unknown> = {}) => ({
      provider: 'openai',
      model,
      baseUrl: server.url('/v1'),
      ...extra,
    });
    const route = (...targets: object[]) => ({ lane: 'llm', cache: false, retry: NO_RETRY, targets });
    app = await createTestApp({
      auth: { apiKeys: [ACME.apiKey] },
      lanes: { llm: { concurrency: 8, queueCapacity: 8 } },
      llm: {
        routes: {
          o3: route(target('o3-mini', o3)),
          gpt5: route(target('gpt-5-mini', gpt5)),
          gpt4o: route(target('gpt-4o', gpt4o)),
          // A gpt-4o that fails, then an o3: one request, each target its own parameters.
          mixed: route(target('gpt-4o', down), target('o3-mini', o3)),
          local: route(target('llama-3.1-8b', compatible, { maxTokensField: 'max_tokens' })),
          'local-reasoner': route(target('qwq-32b', compatible, { maxTokensField: 'max_tokens', reasoning: true })),
        },
      },
    });
  });

  beforeEach(() => {
    for (const server of [o3, gpt5, gpt4o, compatible, down]) server.requests.length = 0;
  });

  afterAll(async () => {
    await app?.close();
    await Promise.all([o3, gpt5, gpt4o, compatible, down].map((server) => server?.close()));
  });

  describe('/v1/chat/completions', () => {
    it.each([
      ['o3', () => o3],
      ['gpt5', () => gpt5],
    ])(
      "reaches %s with the client's max_tokens and sampling parameters: its cap as max_completion_tokens, the rest left out",
      async (route, server) => {
        const completion = await openai().chat.completions.create({
          model: route,
          messages: user('Think.'),
          max_tokens: 500,
          temperature: 0.2,
          top_p: 0.9,
          presence_penalty: 0.5,
          frequency_penalty: 0.5,
          logprobs: true,
          top_logprobs: 2,
          logit_bias: { '50256': -100 },
          stop: ['\nObservation:'],
          seed: 7,
        });

        expect(completion.choices[0].finish_reason).toBe('stop');
        const sent = body(server().requests[0]);
        expect(sent).toMatchObject({ max_completion_tokens: 500, seed: 7 });
        for (const dropped of [
          'max_tokens',
          'temperature',
          'top_p',
          'presence_penalty',
          'frequency_penalty',
          'logprobs',
          'top_logprobs',
          'logit_bias',
          'stop',
        ]) {
          expect(sent).not.toHaveProperty(dropped);
        }
      },
    );

    it("sends the route's cap as max_completion_tokens when the client set none, streamed too", async () => {
      const stream = await openai().chat.completions.create({ model: 'o3', messages: user('Stream.'), stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';

      expect(text).toBe('Thought it through.');
      const sent = body(o3.requests[0]);
      expect(sent.max_completion_tokens).toBe(4096);
      expect(sent).not.toHaveProperty('max_tokens');
    });

    it('sends a gpt-4o its sampling parameters, and both caps as one field', async () => {
      const completion = await openai().chat.completions.create({
        model: 'gpt4o',
        messages: user('Sample.'),
        max_tokens: 500,
        max_completion_tokens: 300,
        temperature: 0.2,
        stop: ['END'],
      });

      expect(completion.choices[0].message.content).toBe('Four oh.');
      const sent = body(gpt4o.requests[0]);
      expect(sent).toMatchObject({ max_completion_tokens: 300, temperature: 0.2, stop: ['END'] });
      expect(sent).not.toHaveProperty('max_tokens');
    });

    it('fails over from a target that takes temperature to a reasoning one, which gets none', async () => {
      const { data, response } = await openai()
        .chat.completions.create({ model: 'mixed', messages: user('Fail over.'), temperature: 0.2 })
        .withResponse();

      expect(data.choices[0].message.content).toBe('Thought it through.');
      expect(response.headers.get('x-bulkhead-served-by')).toBe('openai/o3-mini');
      expect(body(down.requests[0]).temperature).toBe(0.2);
      expect(body(o3.requests[0])).not.toHaveProperty('temperature');
    });

    it('sends max_tokens alone to a compatible target configured for it', async () => {
      const completion = await openai().chat.completions.create({
        model: 'local',
        messages: user('Locally.'),
        max_completion_tokens: 300,
        temperature: 0.2,
      });

      expect(completion.choices[0].message.content).toBe('Local.');
      const sent = body(compatible.requests[0]);
      expect(sent).toMatchObject({ max_tokens: 300, temperature: 0.2 });
      expect(sent).not.toHaveProperty('max_completion_tokens');
    });

    it("follows a target's reasoning setting for a model the rule does not know", async () => {
      await openai().chat.completions.create({ model: 'local-reasoner', messages: user('Reason.'), temperature: 0.2 });

      const sent = body(compatible.requests[0]);
      expect(sent.max_tokens).toBe(4096);
      expect(sent).not.toHaveProperty('temperature');
    });
  });

  describe('/v1/responses', () => {
    it('reaches a reasoning model with max_output_tokens as its max_completion_tokens', async () => {
      const response = await openai().responses.create({
        model: 'gpt5',
        input: 'Think.',
        max_output_tokens: 300,
        temperature: 0.4,
        top_p: 0.8,
      });

      expect(response.status).toBe('completed');
      expect(response.output_text).toBe('Five.');
      const sent = body(gpt5.requests[0]);
      expect(sent.max_completion_tokens).toBe(300);
      expect(sent).not.toHaveProperty('max_tokens');
      expect(sent).not.toHaveProperty('temperature');
      expect(sent).not.toHaveProperty('top_p');
    });

    it('streams from a reasoning model', async () => {
      const stream = await openai().responses.create({ model: 'o3', input: 'Stream.', stream: true });
      let text = '';
      for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;

      expect(text).toBe('Thought it through.');
      expect(body(o3.requests[0]).max_completion_tokens).toBe(4096);
    });

    it('sends max_output_tokens as max_tokens to a compatible target configured for it', async () => {
      const response = await openai().responses.create({ model: 'local', input: 'Locally.', max_output_tokens: 200 });

      expect(response.output_text).toBe('Local.');
      expect(body(compatible.requests[0])).toMatchObject({ max_tokens: 200 });
      expect(body(compatible.requests[0])).not.toHaveProperty('max_completion_tokens');
    });
  });

  describe('/v1/messages', () => {
    it('reaches a reasoning model with its max_tokens as max_completion_tokens, temperature left out', async () => {
      // The Messages API takes `temperature`; this SDK's types no longer list it.
      const params = { model: 'o3', max_tokens: 200, temperature: 0.3, messages: user('Think.') };
      const message = await anthropic().messages.create(params);

      expect(message.content).toEqual([{ type: 'text', text: 'Thought it through.' }]);
      expect(message.stop_reason).toBe('end_turn');
      const sent = body(o3.requests[0]);
      expect(sent.max_completion_tokens).toBe(200);
      expect(sent).not.toHaveProperty('max_tokens');
      expect(sent).not.toHaveProperty('temperature');
    });

    it('streams from a reasoning model', async () => {
      const stream = anthropic().messages.stream({ model: 'gpt5', max_tokens: 100, messages: user('Stream.') });
      const message = await stream.finalMessage();

      expect(message.content).toEqual([{ type: 'text', text: 'Five.' }]);
      expect(body(gpt5.requests[0]).max_completion_tokens).toBe(100);
    });
  });
});
