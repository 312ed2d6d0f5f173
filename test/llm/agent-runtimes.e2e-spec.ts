import { createOpenAI } from '@ai-sdk/openai';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool as agentTool } from '@openai/agents';
import { APICallError, generateText, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';
import { createTestApp, type TestApp } from '../support/create-app';
import { testTenant } from '../support/tenants';

const ACME = testTenant('acme');
const SLOW = testTenant('slow');

/** A route that calls `get_weather` for Paris, then answers. One per client, so each starts at the first step. */
const weatherRoute = (model: string) => ({
  lane: 'llm',
  targets: [
    {
      provider: 'fake',
      model,
      script: [{ toolCall: { name: 'get_weather', arguments: { city: 'Paris' } } }, { text: 'Sunny in Paris.' }],
    },
  ],
});

const ROUTES = {
  echo: { lane: 'llm', targets: [{ provider: 'fake', model: 'echo-1' }] },
  'vercel-tools': weatherRoute('vercel-1'),
  'agents-tools': weatherRoute('agents-1'),
};

/**
 * The agent runtimes' defaults, pointed at the service and changed in nothing else: the Vercel
 * AI SDK's default OpenAI provider and the OpenAI Agents SDK's default model both call
 * `POST /v1/responses`.
 */
describe('agent runtimes with their defaults', () => {
  let app: TestApp;
  /** The paths the clients called: their defaults are what this is about. */
  let paths: string[] = [];
  const recording: typeof fetch = (input, init) => {
    paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
    return fetch(input, init);
  };

  beforeEach(() => {
    paths = [];
  });

  beforeAll(async () => {
    setTracingDisabled(true);
    app = await createTestApp({
      auth: { allowAnonymous: false, apiKeys: [ACME.apiKey, SLOW.apiKey] },
      rateLimits: { tenants: { slow: { rpm: 1 } } },
      lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
      llm: { routes: ROUTES },
    });
  });

  afterAll(() => app.close());

  describe("the Vercel AI SDK's default provider", () => {
    const openai = () => createOpenAI({ baseURL: `${app.url}/v1`, apiKey: ACME.key, fetch: recording });

    afterEach(() => expect(new Set(paths)).toEqual(new Set(['/v1/responses'])));

    it('generates text', async () => {
      const { text, usage } = await generateText({ model: openai()('echo'), prompt: 'hello from the AI SDK' });

      expect(text).toBe('hello from the AI SDK');
      expect(usage.outputTokens).toBeGreaterThan(0);
    });

    it('streams text', async () => {
      const result = streamText({ model: openai()('echo'), prompt: 'a streamed answer of several chunks' });
      let text = '';
      for await (const piece of result.textStream) text += piece;

      expect(text).toBe('a streamed answer of several chunks');
    });

    it('sees an unknown model and a rate limit as its APICallError, with the status', async () => {
      const slow = createOpenAI({ baseURL: `${app.url}/v1`, apiKey: SLOW.key, fetch: recording });
      const unknown = await generateText({ model: openai()('nope'), prompt: 'x', maxRetries: 0 }).catch(
        (e: unknown) => e,
      );
      await generateText({ model: slow('echo'), prompt: 'the one of this minute', maxRetries: 0 });
      const limited = await generateText({ model: slow('echo'), prompt: 'one more', maxRetries: 0 }).catch(
        (e: unknown) => e,
      );

      expect(APICallError.isInstance(unknown) && [unknown.statusCode, unknown.message]).toEqual([
        404,
        'no LLM route of that name (routes: echo, vercel-tools, agents-tools)',
      ]);
      expect(APICallError.isInstance(limited) && [limited.statusCode, limited.isRetryable]).toEqual([429, true]);
    });

    it('runs a tool in two steps', async () => {
      const calls: string[] = [];
      const { text, steps } = await generateText({
        model: openai()('vercel-tools'),
        prompt: 'What is the weather in Paris?',
        tools: {
          get_weather: tool({
            description: 'The weather in a city',
            inputSchema: z.object({ city: z.string() }),
            execute: async ({ city }) => {
              calls.push(city);
              return { city, celsius: 21 };
            },
          }),
        },
        stopWhen: stepCountIs(3),
      });

      expect(calls).toEqual(['Paris']);
      expect(steps).toHaveLength(2);
      expect(text).toBe('Sunny in Paris.');
    });
  });

  describe("the OpenAI Agents SDK's default model", () => {
    it('runs an agent with a function tool', async () => {
      const calls: string[] = [];
      const getWeather = agentTool({
        name: 'get_weather',
        description: 'The weather in a city',
        parameters: z.object({ city: z.string() }),
        execute: async ({ city }) => {
          calls.push(city);
          return `21 C in ${city}`;
        },
      });
      const agent = new Agent({
        name: 'Weather',
        instructions: 'Answer about the weather.',
        tools: [getWeather],
        model: 'agents-tools',
      });
      const runner = new Runner({
        modelProvider: new OpenAIProvider({
          openAIClient: new OpenAI({ baseURL: `${app.url}/v1`, apiKey: ACME.key, fetch: recording }),
        }),
      });

      const result = await runner.run(agent, 'What is the weather in Paris?');

      expect(calls).toEqual(['Paris']);
      expect(result.finalOutput).toBe('Sunny in Paris.');
      expect(paths).toEqual(['/v1/responses', '/v1/responses']);
    });

    const runnerOf = (key: string) =>
      new Runner({
        modelProvider: new OpenAIProvider({
          openAIClient: new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 }),
        }),
      });

    it("sees an unknown model and a rate limit as OpenAI's NotFoundError and RateLimitError", async () => {
      const lost = new Agent({ name: 'Lost', instructions: 'Answer.', model: 'nope' });
      const echo = new Agent({ name: 'Echo', instructions: 'Answer.', model: 'echo' });

      const unknown = await runnerOf(ACME.key)
        .run(lost, 'hello')
        .catch((error: unknown) => error);
      // The slow tenant's one request of this minute went to the AI SDK's test, or goes now.
      await runnerOf(SLOW.key)
        .run(echo, 'the one of this minute')
        .catch(() => undefined);
      const limited = await runnerOf(SLOW.key)
        .run(echo, 'one more')
        .catch((error: unknown) => error);

      expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
      expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    });
  });
});
