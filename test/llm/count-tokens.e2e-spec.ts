import Anthropic from '@anthropic-ai/sdk';
import { estimateInputTokens } from '../../src/llm/pricing';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
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
describe.each(PLATFORMS)('count_tokens by the target itself, on %s', (platform) => {
  let app: TestApp;
  let anthropic: Upstream;

  /** The app of these tests: `claude` counts at the loopback Anthropic, `fake` cannot count, `bedrock` counts at it too. */
  function start(extra: Record<string, unknown> = {}): Promise<TestApp> {
    return createTestApp(
      {
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
            bedrock: {
              lane: 'llm',
              targets: [
                {
                  provider: 'bedrock',
                  model: 'anthropic.claude-test-v1:0',
                  region: 'eu-west-3',
                  baseUrl: anthropic.url(),
                },
              ],
            },
          },
        },
        ...extra,
      },
      { platform },
    );
  }

  beforeEach(async () => {
    anthropic = await Upstream.start(json(200, { input_tokens: 42 }));
    app = await start();
  });

  afterEach(async () => {
    await app.close();
    await anthropic.close();
  });

  const client = () => new Anthropic({ baseURL: app.url, apiKey: ACME.key, maxRetries: 0 });

  it("answers the target's own count of the prompt as sent (thinking too), with the target's model, key and the betas", async () => {
    const { data, response } = await client()
      .messages.countTokens(
        {
          ...QUESTION,
          system: 'Be brief.',
          thinking: { type: 'enabled', budget_tokens: 1024 },
          tools: [{ name: 'f', input_schema: { type: 'object' } }],
        },
        { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } },
      )
      .withResponse();

    expect(data.input_tokens).toBe(42);
    expect(response.headers.get('x-bulkhead-token-count')).toBe('anthropic/claude-test');
    expect(anthropic.requests).toHaveLength(1);
    const [sent] = anthropic.requests;
    expect(sent.path).toBe('/v1/messages/count_tokens');
    expect(sent.headers['x-api-key']).toBe(PROVIDER_KEY);
    expect(sent.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(JSON.parse(sent.body)).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'How many tokens is this?' }],
      system: 'Be brief.',
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
    });
  });

  it("counts with Bedrock's CountTokens: the InvokeModel body, with room for the thinking budget", async () => {
    anthropic.use(json(200, { inputTokens: 17 }));
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = 'AKIATESTCOUNT0001';
    process.env.AWS_SECRET_ACCESS_KEY = 'a-test-secret-for-count-tokens';
    try {
      const { data, response } = await client()
        .messages.countTokens({ ...QUESTION, model: 'bedrock', thinking: { type: 'enabled', budget_tokens: 1024 } })
        .withResponse();

      expect(data.input_tokens).toBe(17);
      expect(response.headers.get('x-bulkhead-token-count')).toBe('bedrock/anthropic.claude-test-v1:0');
    } finally {
      process.env.AWS_ACCESS_KEY_ID = saved.id;
      process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
      if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
      if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
    }
    const [sent] = anthropic.requests;
    expect(sent.path).toBe('/model/anthropic.claude-test-v1%3A0/count-tokens');
    const { input } = JSON.parse(sent.body) as { input: { invokeModel: { body: string } } };
    const invokeBody = JSON.parse(Buffer.from(input.invokeModel.body, 'base64').toString('utf8'));
    expect(invokeBody).toMatchObject({ thinking: { budget_tokens: 1024 }, messages: QUESTION.messages });
    expect(invokeBody.max_tokens).toBeGreaterThan(1024);
  });

  it("counts earlier turns' thinking in the estimate, which the translation does not show", async () => {
    anthropic.use(json(500, { type: 'error', error: { type: 'api_error', message: 'down' } }));
    const thinking = 'a long thought '.repeat(100);
    const turns = [
      { role: 'user' as const, content: 'First question' },
      {
        role: 'assistant' as const,
        content: [
          { type: 'thinking' as const, thinking, signature: 'sig' },
          { type: 'text' as const, text: 'First answer' },
        ],
      },
      { role: 'user' as const, content: 'Second question' },
    ];

    const { data } = await client().messages.countTokens({ model: 'claude', messages: turns }).withResponse();

    const translated = estimateInputTokens({
      model: 'claude',
      messages: [
        { role: 'user', content: 'First question' },
        { role: 'assistant', content: 'First answer' },
        { role: 'user', content: 'Second question' },
      ],
    });
    expect(data.input_tokens).toBe(translated + Buffer.byteLength(thinking));
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

  it("counts each count against the tenant's requests per minute: past it, 429 and no request to the target", async () => {
    await app.close();
    app = await start({ rateLimits: { default: { rpm: 2 } } });

    await client().messages.countTokens(QUESTION);
    await client().messages.countTokens(QUESTION);
    const refused = await client()
      .messages.countTokens(QUESTION)
      .catch((error: unknown) => error);

    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    expect((refused as InstanceType<typeof Anthropic.RateLimitError>).error).toMatchObject({
      type: 'error',
      error: { type: 'rate_limit_error' },
    });
    expect(anthropic.requests).toHaveLength(2);
  });
});
