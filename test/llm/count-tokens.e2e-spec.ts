import Anthropic from '@anthropic-ai/sdk';
import { estimateInputTokens } from '../../src/llm/pricing';
import { createTestApp, type TestApp } from '../support/create-app';
import { testTenant } from '../support/tenants';
import { json, Upstream } from '../support/upstream';

const ACME = testTenant('acme');
const PROVIDER_KEY = 'sk-ant-provider-key-of-the-config';
const QUESTION = { model: 'claude', messages: [{ role: 'user' as const, content: 'How many tokens is this?' }] };

/**
 * `POST /v1/messages/count_tokens` asks the route's first target where its provider can count
 * (an `anthropic` target: its own `count_tokens`, free of charge), through the caller's pool,
 * and answers Bulkhead's estimate when it cannot or fails, saying which in
 * `x-bulkhead-token-count`.
 */
describe('count_tokens by the target itself', () => {
  let app: TestApp;
  let anthropic: Upstream;

  beforeEach(async () => {
    anthropic = await Upstream.start(json(200, { input_tokens: 42 }));
    app = await createTestApp({
      auth: { allowAnonymous: false, apiKeys: [ACME.apiKey] },
      lanes: { llm: { concurrency: 2, queueCapacity: 2 } },
      llm: {
        routes: {
          claude: {
            lane: 'llm',
            targets: [
              { provider: 'anthropic', model: 'claude-test', baseUrl: anthropic.url('/v1'), apiKey: PROVIDER_KEY },
              { provider: 'fake', model: 'backup-1' },
            ],
          },
          fake: { lane: 'llm', targets: [{ provider: 'fake', model: 'fake-1' }] },
        },
      },
    });
  });

  afterEach(async () => {
    await app.close();
    await anthropic.close();
  });

  const client = () => new Anthropic({ baseURL: app.url, apiKey: ACME.key, maxRetries: 0 });

  it("answers the target's own count, sent as Anthropic takes it: the prompt, the target's model and key", async () => {
    const { data, response } = await client()
      .messages.countTokens({
        ...QUESTION,
        system: 'Be brief.',
        tools: [{ name: 'f', input_schema: { type: 'object' } }],
      })
      .withResponse();

    expect(data.input_tokens).toBe(42);
    expect(response.headers.get('x-bulkhead-token-count')).toBe('anthropic/claude-test');
    expect(anthropic.requests).toHaveLength(1);
    const [sent] = anthropic.requests;
    expect(sent.path).toBe('/v1/messages/count_tokens');
    expect(sent.headers['x-api-key']).toBe(PROVIDER_KEY);
    expect(JSON.parse(sent.body)).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'How many tokens is this?' }],
      system: [{ type: 'text', text: 'Be brief.' }],
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
    });
  });

  it('answers the estimate, and says so, when the target fails to count', async () => {
    anthropic.use(json(500, { type: 'error', error: { type: 'api_error', message: 'down' } }));

    const { data, response } = await client().messages.countTokens(QUESTION).withResponse();

    expect(response.headers.get('x-bulkhead-token-count')).toBe('estimate');
    expect(data.input_tokens).toBe(estimateInputTokens({ model: 'claude', messages: QUESTION.messages }));
  });

  it('answers the estimate for a route whose first target cannot count', async () => {
    const { response } = await client()
      .messages.countTokens({ ...QUESTION, model: 'fake' })
      .withResponse();

    expect(response.headers.get('x-bulkhead-token-count')).toBe('estimate');
    expect(anthropic.requests).toHaveLength(0);
  });
});
