import type { ServerResponse } from 'node:http';
import { FakeClock } from '../../common/fake-clock';
import { loopbackUpstreams } from '../../../test/support/loopback-upstreams';
import { providerAttempt } from '../../../test/support/provider-attempt';
import { rejection } from '../../../test/support/rejection';
import { json, type Upstream, type UpstreamRequest } from '../../../test/support/upstream';
import type { ChatRequest } from '../chat.types';
import type { Environment } from './bedrock-credentials';
import { countTokensModelIds, NO_COUNT_TOKENS_RECHECK_MS } from './bedrock-count-tokens';
import { BedrockProvider } from './bedrock.provider';
import type { ProviderTarget } from './llm-provider';

const KEYS: Environment = { AWS_ACCESS_KEY_ID: 'AKIATESTCOUNT0001', AWS_SECRET_ACCESS_KEY: 'count-tokens-secret-0001' };
const HELLO: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'Hello' }] };
/** Bedrock's refusal of CountTokens for a model without it, as it answers on the wire. */
const NO_COUNT_TOKENS = json(
  400,
  { message: "The provided model doesn't support counting tokens." },
  { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
);

describe('countTokensModelIds', () => {
  it.each([
    ['us.anthropic.claude-sonnet-4-6', ['us.anthropic.claude-sonnet-4-6', 'anthropic.claude-sonnet-4-6']],
    [
      'global.anthropic.claude-opus-4-5-20251101-v1:0',
      ['global.anthropic.claude-opus-4-5-20251101-v1:0', 'anthropic.claude-opus-4-5-20251101-v1:0'],
    ],
    ['apac.amazon.nova-pro-v1:0', ['apac.amazon.nova-pro-v1:0', 'amazon.nova-pro-v1:0']],
    [
      'us-gov.anthropic.claude-3-haiku-20240307-v1:0',
      ['us-gov.anthropic.claude-3-haiku-20240307-v1:0', 'anthropic.claude-3-haiku-20240307-v1:0'],
    ],
    ['anthropic.claude-3-5-haiku-20241022-v1:0', ['anthropic.claude-3-5-haiku-20241022-v1:0']],
    ['us.claude', ['us.claude']],
    [
      'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123',
      ['arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123'],
    ],
  ])('counts %s with %p', (model, ids) => {
    expect(countTokensModelIds(model)).toEqual(ids);
  });
});

const loopback = loopbackUpstreams();
const { upstream } = loopback;

describe('BedrockProvider.countTokens', () => {
  let clock: FakeClock;
  let provider: BedrockProvider;

  beforeEach(() => {
    clock = new FakeClock(Date.UTC(2026, 4, 1));
    provider = new BedrockProvider(clock, KEYS);
  });

  const target = (server: Upstream, model = 'anthropic.claude-sonnet-4-6'): ProviderTarget => ({
    provider: 'bedrock',
    model,
    region: 'us-east-1',
    baseUrl: server.url(),
  });
  const count = (server: Upstream, model?: string) =>
    provider.countTokens(providerAttempt(target(server, model), HELLO, { pool: loopback.pool }));

  it('answers the count Bedrock answers', async () => {
    const server = await upstream(json(200, { inputTokens: 9 }));

    expect(await count(server)).toBe(9);
    expect(server.requests[0].path).toBe('/model/anthropic.claude-sonnet-4-6/count-tokens');
  });

  it.each([[{ inputTokens: -3 }], [{ inputTokens: 2.5 }], [{ inputTokens: 1e12 }], [{ input_tokens: 9 }]])(
    'fails an answer that is no count (%p) as a malformed answer',
    async (answer) => {
      const server = await upstream(json(200, answer));

      expect(await rejection(count(server))).toMatchObject({ kind: 'transient', code: 'bad_response' });
    },
  );

  it('fails a model without CountTokens as unsupported, and does not ask again for an hour of the clock', async () => {
    const server = await upstream(NO_COUNT_TOKENS);

    const first = await rejection(count(server));
    const second = await rejection(count(server));
    expect(server.requests).toHaveLength(1);
    clock.advance(NO_COUNT_TOKENS_RECHECK_MS - 1);
    await rejection(count(server));
    expect(server.requests).toHaveLength(1);

    clock.advance(1);
    server.use(json(200, { inputTokens: 12 }));
    expect(await count(server)).toBe(12);
    expect(server.requests).toHaveLength(2);
    for (const error of [first, second]) {
      expect(error).toMatchObject({ kind: 'invalid_request', code: 'unsupported_request' });
      expect(String((error as Error).message)).not.toContain('provided model');
    }
  });

  it('remembers the refusal of that model only', async () => {
    const server = await upstream(NO_COUNT_TOKENS);
    await rejection(count(server, 'anthropic.claude-sonnet-4-6'));

    server.use(json(200, { inputTokens: 5 }));
    expect(await count(server, 'anthropic.claude-haiku-4-5')).toBe(5);
    expect(server.requests).toHaveLength(2);
  });

  it('asks again after a refusal of the request rather than the model', async () => {
    const server = await upstream(
      json(
        400,
        { message: 'prompt is too long: 300000 tokens > 200000 maximum' },
        { 'x-amzn-errortype': 'ValidationException' },
      ),
    );

    expect(await rejection(count(server))).toMatchObject({ code: 'context_length_exceeded' });
    server.use(json(200, { inputTokens: 7 }));
    expect(await count(server)).toBe(7);
  });

  describe('an inference profile', () => {
    const PROFILE = 'us.anthropic.claude-sonnet-4-6';
    /** Refuses the profile's id and counts with any other. */
    const profileRefused = (tokens: number) => (request: UpstreamRequest, response: ServerResponse) =>
      request.path.startsWith('/model/us.')
        ? NO_COUNT_TOKENS(request, response)
        : json(200, { inputTokens: tokens })(request, response);

    it("counts with its foundation model's id when Bedrock refuses the profile's, and goes there first after", async () => {
      const server = await upstream(profileRefused(21));

      expect(await count(server, PROFILE)).toBe(21);
      expect(await count(server, PROFILE)).toBe(21);
      expect(server.requests.map((request) => request.path)).toEqual([
        '/model/us.anthropic.claude-sonnet-4-6/count-tokens',
        '/model/anthropic.claude-sonnet-4-6/count-tokens',
        '/model/anthropic.claude-sonnet-4-6/count-tokens',
      ]);
    });

    it('counts with its own id where Bedrock takes it', async () => {
      const server = await upstream(json(200, { inputTokens: 8 }));

      expect(await count(server, PROFILE)).toBe(8);
      expect(server.requests).toHaveLength(1);
    });

    it('is remembered as having no CountTokens once both ids are refused', async () => {
      const server = await upstream(NO_COUNT_TOKENS);

      expect(await rejection(count(server, PROFILE))).toMatchObject({ code: 'unsupported_request' });
      expect(await rejection(count(server, PROFILE))).toMatchObject({ code: 'unsupported_request' });
      expect(server.requests).toHaveLength(2);
    });
  });
});
