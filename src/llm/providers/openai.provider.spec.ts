import { LazyAbortController } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import type { PoolName } from '../../containment/containment-decision';
import { EgressPolicy } from '../../containment/egress';
import { HttpPool } from '../../containment/http-pool';
import { eventually } from '../../../test/support/eventually';
import { loopbackUpstreams } from '../../../test/support/loopback-upstreams';
import { providerAttempt } from '../../../test/support/provider-attempt';
import { rejection } from '../../../test/support/rejection';
import { hang, json, type Upstream, type UpstreamHandler } from '../../../test/support/upstream';
import type { ChatRequest } from '../chat.types';
import type { ProviderTarget } from './llm-provider';
import { OpenAiProvider } from './openai.provider';
import { isProviderFailure } from './provider-errors';

const API_KEY = 'sk-test-4f1c9d2e7b';
const clock = new FakeClock(Date.UTC(2026, 4, 1));
const provider = new OpenAiProvider(clock);

const loopback = loopbackUpstreams();
const { upstream } = loopback;

function target(server: Upstream, overrides: Partial<ProviderTarget> = {}): ProviderTarget {
  return { provider: 'openai', model: 'gpt-4o-mini', baseUrl: server.url('/v1'), apiKey: API_KEY, ...overrides };
}

const REQUEST: ChatRequest = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello' },
  ],
  max_completion_tokens: 64,
  temperature: 0.2,
};

const COMPLETION = {
  id: 'chatcmpl-abc',
  object: 'chat.completion',
  created: 1_767_225_600,
  model: 'gpt-4o-mini-2024-07-18',
  choices: [
    { index: 0, message: { role: 'assistant', content: 'Hi.', refusal: null }, finish_reason: 'stop', logprobs: null },
  ],
  usage: {
    prompt_tokens: 20,
    completion_tokens: 2,
    total_tokens: 22,
    prompt_tokens_details: { cached_tokens: 16, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  },
  system_fingerprint: 'fp_1',
  service_tier: 'default',
};

describe('OpenAiProvider', () => {
  describe('the request', () => {
    it('posts the request to {baseUrl}/chat/completions with the bearer key and only its own headers', async () => {
      const server = await upstream(json(200, COMPLETION));
      const request = { ...REQUEST, extra_headers: { 'x-tenant-secret': 'no' }, seed: 7 };

      await provider.complete(providerAttempt(target(server), request, { pool: loopback.pool }));

      expect(server.requests).toHaveLength(1);
      const [received] = server.requests;
      expect(received.method).toBe('POST');
      expect(received.path).toBe('/v1/chat/completions');
      expect(received.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(received.headers['content-type']).toBe('application/json');
      expect(received.headers.accept).toBe('application/json');
      // Whatever the request carries, only the headers the provider builds (and HTTP's own) go out.
      expect(Object.keys(received.headers).sort()).toEqual(
        ['accept', 'authorization', 'connection', 'content-length', 'content-type', 'host'].sort(),
      );
      expect(JSON.parse(received.body)).toEqual({ ...request, stream: false });
    });

    it('forces stream false and drops stream_options', async () => {
      const server = await upstream(json(200, COMPLETION));

      await provider.complete(
        providerAttempt(
          target(server),
          { ...REQUEST, stream: true, stream_options: { include_usage: true } },
          { pool: loopback.pool },
        ),
      );

      const body = JSON.parse(server.requests[0].body) as Record<string, unknown>;
      expect(body.stream).toBe(false);
      expect(body).not.toHaveProperty('stream_options');
    });

    it('sends no Authorization to a target without a key, or with an empty one', async () => {
      const server = await upstream(json(200, COMPLETION));

      await provider.complete(providerAttempt(target(server, { apiKey: undefined }), REQUEST, { pool: loopback.pool }));
      await provider.complete(providerAttempt(target(server, { apiKey: '' }), REQUEST, { pool: loopback.pool }));

      expect(server.requests.map((request) => request.headers.authorization)).toEqual([undefined, undefined]);
    });

    it('joins a base URL that ends in a slash without doubling it', async () => {
      const server = await upstream(json(200, COMPLETION));

      await provider.complete(
        providerAttempt(target(server, { baseUrl: server.url('/openai/v1/') }), REQUEST, { pool: loopback.pool }),
      );

      expect(server.requests[0].path).toBe('/openai/v1/chat/completions');
    });

    it('goes to api.openai.com when the target names no base URL', async () => {
      const urls: string[] = [];
      const recording = {
        request: (url: string) => {
          urls.push(url);
          return Promise.reject(new Error('not sent'));
        },
        stream: () => Promise.reject(new Error('not streamed')),
      };

      await rejection(
        provider.complete(providerAttempt({ provider: 'openai', model: 'gpt-4o' }, REQUEST, { http: recording })),
      );

      expect(urls).toEqual(['https://api.openai.com/v1/chat/completions']);
    });
  });

  describe('the answer', () => {
    it('answers the completion as given, usage and cached tokens included', async () => {
      const server = await upstream(json(200, COMPLETION));

      const completion = await provider.complete(providerAttempt(target(server), REQUEST, { pool: loopback.pool }));

      expect(completion).toEqual(COMPLETION);
    });

    it('fills total_tokens and created when a compatible server leaves them out', async () => {
      const { created: _created, ...answer } = COMPLETION;
      const server = await upstream(json(200, { ...answer, usage: { prompt_tokens: 5, completion_tokens: 3 } }));

      const completion = await provider.complete(providerAttempt(target(server), REQUEST, { pool: loopback.pool }));

      expect(completion.usage).toEqual({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
      expect(completion.created).toBe(Math.floor(clock.wallNow() / 1000));
    });

    it.each([
      ['a body that is not JSON', (_: unknown, response: any) => response.writeHead(200).end('<html>ok</html>')],
      ['an empty body', (_: unknown, response: any) => response.writeHead(200).end()],
      ['no choices', json(200, { ...COMPLETION, choices: [] })],
      ['no usage', json(200, { ...COMPLETION, usage: undefined })],
      ['usage without counts', json(200, { ...COMPLETION, usage: { prompt_tokens: 'many' } })],
      ['an array', json(200, [COMPLETION])],
    ] as Array<[string, UpstreamHandler]>)('fails as transient on a 2xx with %s', async (_name, handler) => {
      const server = await upstream(handler);

      const error = await rejection(
        provider.complete(providerAttempt(target(server), REQUEST, { pool: loopback.pool })),
      );

      expect(error).toMatchObject({ kind: 'transient', code: 'bad_response' });
    });
  });

  describe('failures', () => {
    const quota = {
      error: { message: `quota of ${API_KEY}`, type: 'insufficient_quota', param: null, code: 'insufficient_quota' },
    };
    const rate = {
      error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    };
    const invalid = { error: { message: 'bad', type: 'invalid_request_error', param: 'messages', code: null } };

    it.each([
      [429, quota, { 'retry-after': '20' }, 'unavailable', 'insufficient_quota', undefined],
      [429, rate, { 'retry-after-ms': '1200', 'retry-after': '2' }, 'transient', 'rate_limited', 1_200],
      [429, rate, { 'retry-after': '3' }, 'transient', 'rate_limited', 3_000],
      [408, {}, {}, 'transient', 'upstream_timeout', undefined],
      [409, {}, {}, 'transient', 'upstream_error', undefined],
      [
        500,
        { error: { message: 'boom', type: 'server_error', param: null, code: null } },
        {},
        'transient',
        'upstream_error',
        undefined,
      ],
      [
        503,
        { error: { message: 'slow down', type: 'server_error', param: null, code: 'slow_down' } },
        { 'retry-after': '1' },
        'transient',
        'overloaded',
        1_000,
      ],
      [400, invalid, {}, 'invalid_request', 'bad_request', undefined],
      [413, {}, {}, 'invalid_request', 'request_too_large', undefined],
      [422, invalid, {}, 'invalid_request', 'bad_request', undefined],
      [
        401,
        {
          error: {
            message: `Incorrect API key provided: ${API_KEY}`,
            type: 'invalid_request_error',
            param: null,
            code: 'invalid_api_key',
          },
        },
        {},
        'unavailable',
        'unauthorized',
        undefined,
      ],
      [403, {}, {}, 'unavailable', 'forbidden', undefined],
      [
        404,
        {
          error: {
            message: 'The model does not exist',
            type: 'invalid_request_error',
            param: null,
            code: 'model_not_found',
          },
        },
        {},
        'unavailable',
        'model_not_found',
        undefined,
      ],
      [410, {}, {}, 'unavailable', 'upstream_refused', undefined],
    ] as Array<[number, unknown, Record<string, string>, string, string, number | undefined]>)(
      'maps %i %j (headers %j) to %s / %s',
      async (status, body, headers, kind, code, retryAfterMs) => {
        const server = await upstream(json(status, body, headers));

        const error = await rejection(
          provider.complete(providerAttempt(target(server), REQUEST, { pool: loopback.pool })),
        );

        expect(isProviderFailure(error)).toBe(true);
        expect(error).toMatchObject({ kind, code, retryAfterMs, upstreamStatus: status });
        expect(error.message).toMatch(new RegExp(`^target openai/gpt-4o-mini answered ${status}: [a-z ]+$`));
        // Nothing of the key, the upstream's words or where it lives.
        expect(error.message).not.toContain(API_KEY);
        expect(error.message).not.toContain('sk-');
        expect(error.message).not.toContain(String(server.port));
        expect(error.message).not.toContain('127.0.0.1');
        for (const word of [
          'quota of',
          'Rate limit reached',
          'boom',
          'slow down',
          'Incorrect',
          'The model does not exist',
        ]) {
          expect(error.message).not.toContain(word);
        }
      },
    );

    it('fails as transient when the target cannot be reached, naming no address', async () => {
      const server = await upstream(json(200, COMPLETION));
      const closed = target(server);
      const { port } = server;
      await server.close();

      const error = await rejection(provider.complete(providerAttempt(closed, REQUEST, { pool: loopback.pool })));

      expect(error).toMatchObject({ kind: 'transient', code: 'unreachable' });
      expect(error.message).toMatch(/^target openai\/gpt-4o-mini could not be reached/);
      expect(error.message).not.toContain(String(port));
      expect(error.message).not.toContain(API_KEY);
    });

    it('passes the pool refusal of a destination the egress rules deny', async () => {
      const server = await upstream(json(200, COMPLETION));
      // Loopback is private: refused unless a CIDR allows it.
      const strict = new HttpPool(
        { name: 'normal' as PoolName, maxConcurrency: 1, timeoutMs: 5_000, pooledConnectionLifetimeMs: 60_000 },
        new EgressPolicy({ allowHosts: ['*'], allowPrivateCidrs: [] }),
        clock,
      );

      try {
        const error = await rejection(provider.complete(providerAttempt(target(server), REQUEST, { pool: strict })));

        expect(error).toMatchObject({ kind: 'egress_denied' });
        expect(server.requests).toHaveLength(0);
      } finally {
        await strict.close();
      }
    });

    it('stops the request when the attempt is aborted, with the abort reason', async () => {
      const server = await upstream(hang);
      const abort = new LazyAbortController();
      const answered = provider.complete(providerAttempt(target(server), REQUEST, { pool: loopback.pool, abort }));
      await eventually(() => expect(server.requests).toHaveLength(1));
      const reason = new Error('attempt timed out');

      abort.abort(reason);

      await expect(answered).rejects.toBe(reason);
      await eventually(() => expect(server.abandoned).toBe(1));
    });
  });
});
