import Anthropic from '@anthropic-ai/sdk';
import { estimateInputTokens } from '../../src/llm/pricing';
import { createTestApp, type TestApp } from '../support/create-app';
import { testTenant } from '../support/tenants';
import { json, Upstream, type UpstreamHandler } from '../support/upstream';

const ACME = testTenant('acme');
const SONNET = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
/** A model without CountTokens, by any id. */
const NO_COUNT_MODEL = 'anthropic.claude-no-count-v1:0';
/** A cross-region inference profile: CountTokens refuses its id, and counts its foundation model's. */
const PROFILE = 'us.anthropic.claude-sonnet-4-6';
const QUESTION = { messages: [{ role: 'user' as const, content: 'How many tokens is this?' }] };
/** Bulkhead's own estimate of QUESTION sent to the route `model`. */
const estimate = (model: string) => estimateInputTokens({ model, messages: QUESTION.messages });
const AWS_KEYS = { AWS_ACCESS_KEY_ID: 'AKIATESTBEDROCKCOUNT', AWS_SECRET_ACCESS_KEY: 'bedrock-count-tokens-secret' };

/** Bedrock's runtime as far as CountTokens goes: a count for most models, its refusal for the others. */
function countTokensWire(counts: { current: UpstreamHandler }): UpstreamHandler {
  const refused = [NO_COUNT_MODEL, PROFILE].map((model) => `/model/${encodeURIComponent(model)}/count-tokens`);
  return (request, response) => {
    if (refused.includes(request.path)) {
      return json(
        400,
        { message: "The provided model doesn't support counting tokens." },
        { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
      )(request, response);
    }
    return counts.current(request, response);
  };
}

/**
 * `POST /v1/messages/count_tokens` on Bedrock-first routes, with Anthropic's SDK as the client and
 * a loopback server speaking Bedrock's CountTokens wire: Bedrock's own count where the model has
 * CountTokens, the estimate (saying so) where it has not or the count fails.
 */
describe('count_tokens on a Bedrock-first route', () => {
  let bedrock: Upstream;
  let app: TestApp;
  const counts = { current: json(200, { inputTokens: 14 }) };
  const saved = Object.fromEntries(Object.keys(AWS_KEYS).map((name) => [name, process.env[name]]));

  const countTokens = (model: string) =>
    new Anthropic({ apiKey: ACME.key, baseURL: app.url, maxRetries: 0 }).messages
      .countTokens({ ...QUESTION, model })
      .withResponse();

  beforeAll(async () => {
    Object.assign(process.env, AWS_KEYS);
    bedrock = await Upstream.start(countTokensWire(counts));
    const route = (model: string) => ({
      lane: 'llm',
      targets: [{ provider: 'bedrock', model, region: 'us-east-1', baseUrl: bedrock.url() }],
    });
    app = await createTestApp({
      auth: { allowAnonymous: false, apiKeys: [ACME.apiKey] },
      lanes: { llm: { concurrency: 2, queueCapacity: 2 } },
      llm: { routes: { sonnet: route(SONNET), 'no-count': route(NO_COUNT_MODEL), profile: route(PROFILE) } },
    });
  });

  beforeEach(() => {
    bedrock.requests.length = 0;
    counts.current = json(200, { inputTokens: 14 });
  });

  afterAll(async () => {
    await app?.close();
    await bedrock?.close();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("answers Bedrock's count, asked with a signed CountTokens of the InvokeModel body", async () => {
    const { data, response } = await countTokens('sonnet');

    expect(data.input_tokens).toBe(14);
    expect(response.headers.get('x-bulkhead-token-count')).toBe(`bedrock/${SONNET}`);
    const [sent] = bedrock.requests;
    expect(sent.path).toBe(`/model/${encodeURIComponent(SONNET)}/count-tokens`);
    expect(sent.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIATESTBEDROCKCOUNT\/\d{8}\/us-east-1\/bedrock\/aws4_request, /,
    );
    const { input } = JSON.parse(sent.body) as { input: { invokeModel: { body: string } } };
    const invokeBody = JSON.parse(Buffer.from(input.invokeModel.body, 'base64').toString('utf8'));
    expect(invokeBody).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', messages: QUESTION.messages });
  });

  it('answers the estimate for a model without CountTokens, and asks Bedrock once', async () => {
    const first = await countTokens('no-count');
    const second = await countTokens('no-count');

    for (const { data, response } of [first, second]) {
      expect(data.input_tokens).toBe(estimate('no-count'));
      expect(response.headers.get('x-bulkhead-token-count')).toBe('estimate');
    }
    expect(bedrock.requests.map((request) => request.path)).toEqual([
      `/model/${encodeURIComponent(NO_COUNT_MODEL)}/count-tokens`,
    ]);
  });

  it("counts an inference profile's prompt with its foundation model's id, once that is known", async () => {
    const first = await countTokens('profile');
    const second = await countTokens('profile');

    for (const { data, response } of [first, second]) {
      expect(data.input_tokens).toBe(14);
      expect(response.headers.get('x-bulkhead-token-count')).toBe(`bedrock/${PROFILE}`);
    }
    expect(bedrock.requests.map((request) => request.path)).toEqual([
      `/model/${encodeURIComponent(PROFILE)}/count-tokens`,
      '/model/anthropic.claude-sonnet-4-6/count-tokens',
      '/model/anthropic.claude-sonnet-4-6/count-tokens',
    ]);
  });

  it.each([
    ['fails', json(500, { message: 'internal' }, { 'x-amzn-errortype': 'InternalServerException' })],
    ['answers no count', json(200, { inputTokens: -1 })],
  ])('answers the estimate when Bedrock %s, and asks again the next time', async (_case, answer) => {
    counts.current = answer;
    const { data, response } = await countTokens('sonnet');
    counts.current = json(200, { inputTokens: 14 });
    const again = await countTokens('sonnet');

    expect(data.input_tokens).toBe(estimate('sonnet'));
    expect(response.headers.get('x-bulkhead-token-count')).toBe('estimate');
    expect(again.data.input_tokens).toBe(14);
    expect(bedrock.requests).toHaveLength(2);
  });
});
