import { LazyAbortController } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import type { PoolName } from '../../containment/containment-decision';
import { EgressPolicy } from '../../containment/egress';
import { HttpPool } from '../../containment/http-pool';
import { eventually } from '../../../test/support/eventually';
import { loopbackUpstreams } from '../../../test/support/loopback-upstreams';
import { providerAttempt } from '../../../test/support/provider-attempt';
import { rejection } from '../../../test/support/rejection';
import { type Deferred, deferred } from '../../../test/support/deferred';
import { openaiChunks, streamed } from '../../../test/support/sse';
import { hang, json, type Upstream, type UpstreamHandler } from '../../../test/support/upstream';
import type { ChatChunk, ChatRequest } from '../chat.types';
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
  // The attempt's cap (providerAttempt's default), as the route's cappedRequest leaves it.
  max_completion_tokens: 256,
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

    it("sends a reasoning model the attempt's cap as max_completion_tokens, without what it refuses", async () => {
      const server = await upstream(json(200, COMPLETION));
      const request = { ...REQUEST, max_tokens: 900, top_p: 0.5, reasoning_effort: 'low' };

      await provider.complete(
        providerAttempt(target(server, { model: 'o3-mini' }), request, { pool: loopback.pool, maxOutputTokens: 300 }),
      );

      const { temperature: _t, top_p: _p, max_tokens: _m, ...kept } = request;
      expect(JSON.parse(server.requests[0].body)).toEqual({ ...kept, max_completion_tokens: 300, stream: false });
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

  describe('streaming', () => {
    const CHUNKS = openaiChunks(['Hel', 'lo ', 'there'], { model: 'gpt-4o-mini-2024-07-18' });

    /** A handler writing each of `writes` as it is, then ending the answer. */
    const raw =
      (...writes: string[]): UpstreamHandler =>
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const piece of writes) response.write(piece);
        response.end();
      };
    const data = (payload: unknown) => `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
    /** A handler writing `writes`, then holding the answer open; `closed` resolves when the client goes. */
    const heldOpen =
      (closed: Deferred<void>, ...writes: string[]): UpstreamHandler =>
      (_request, response) => {
        response.on('close', () => closed.resolve());
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const piece of writes) response.write(piece);
      };

    async function collect(chunks: AsyncIterable<ChatChunk>): Promise<ChatChunk[]> {
      const all: ChatChunk[] = [];
      for await (const chunk of chunks) all.push(chunk);
      return all;
    }

    /** What reading the stream threw, and the chunks before it. */
    async function failure(chunks: AsyncIterable<ChatChunk>): Promise<{ error: Error; before: ChatChunk[] }> {
      const before: ChatChunk[] = [];
      const error = await rejection(
        (async () => {
          for await (const chunk of chunks) before.push(chunk);
        })(),
      );
      return { error, before };
    }

    const streamOf = (server: Upstream, request: ChatRequest = REQUEST, overrides: Partial<ProviderTarget> = {}) =>
      provider.stream(providerAttempt(target(server, overrides), request, { pool: loopback.pool }));

    it('answers the chunks as given, fields it does not know included, through to [DONE]', async () => {
      const given = CHUNKS.map((chunk) => ({ ...chunk, system_fingerprint: 'fp_1', service_tier: 'default' }));
      const server = await upstream(streamed(given));

      const chunks = await collect(streamOf(server));

      expect(chunks).toEqual(given);
      // Its pool permit is given back once the body has closed.
      await eventually(() => expect(loopback.pool.snapshot().active).toBe(0));
    });

    it('posts the request with stream: true, asking for the usage even when the client asked not to', async () => {
      const server = await upstream(streamed(CHUNKS));
      const request = {
        ...REQUEST,
        stream: true,
        stream_options: { include_usage: false, include_obfuscation: false },
      };

      await collect(streamOf(server, request));

      const [received] = server.requests;
      expect(received.path).toBe('/v1/chat/completions');
      expect(received.headers.accept).toBe('text/event-stream');
      expect(received.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(JSON.parse(received.body)).toEqual({
        ...REQUEST,
        stream: true,
        stream_options: { include_usage: true, include_obfuscation: false },
      });
    });

    it('sends max_tokens alone to a target configured for it, streamed too', async () => {
      const server = await upstream(streamed(CHUNKS));

      await collect(streamOf(server, REQUEST, { model: 'llama-3.1-8b', maxTokensField: 'max_tokens' }));

      const body = JSON.parse(server.requests[0].body);
      expect(body.max_tokens).toBe(256);
      expect(body).not.toHaveProperty('max_completion_tokens');
      expect(body.temperature).toBe(0.2);
    });

    it.each([
      ['no stream_options', undefined],
      ['stream_options null', null],
    ])('asks for the usage when the client sent %s', async (_name, streamOptions) => {
      const server = await upstream(streamed(CHUNKS));

      await collect(streamOf(server, { ...REQUEST, stream_options: streamOptions }));

      expect(JSON.parse(server.requests[0].body)).toMatchObject({
        stream: true,
        stream_options: { include_usage: true },
      });
    });

    it('sends no Authorization to a target without a key', async () => {
      const server = await upstream(streamed(CHUNKS));

      await collect(streamOf(server, REQUEST, { apiKey: '' }));

      expect(server.requests[0].headers.authorization).toBeUndefined();
    });

    it('fills the id, created and model a compatible server leaves out', async () => {
      const server = await upstream(raw(data({ choices: [{ index: 0, delta: { content: 'x' } }] }), data('[DONE]')));

      const [chunk] = await collect(streamOf(server));

      expect(chunk).toEqual({
        id: '',
        object: 'chat.completion.chunk',
        created: Math.floor(clock.wallNow() / 1000),
        model: 'gpt-4o-mini',
        choices: [{ index: 0, delta: { content: 'x' } }],
      });
    });

    it.each([
      [
        429,
        { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } },
        { 'retry-after-ms': '1500' },
        'transient',
        'rate_limited',
        1_500,
      ],
      [
        503,
        { error: { message: 'slow down', type: 'server_error' } },
        { 'retry-after': '2' },
        'transient',
        'overloaded',
        2_000,
      ],
      [
        400,
        { error: { message: 'bad', type: 'invalid_request_error' } },
        {},
        'invalid_request',
        'bad_request',
        undefined,
      ],
      [401, { error: { message: `bad key ${API_KEY}` } }, {}, 'unavailable', 'unauthorized', undefined],
    ] as Array<[number, unknown, Record<string, string>, string, string, number | undefined]>)(
      'fails before any chunk on a %i as the status says',
      async (status, body, headers, kind, code, retryAfterMs) => {
        const server = await upstream(json(status, body, headers));

        const { error, before } = await failure(streamOf(server));

        expect(before).toEqual([]);
        expect(isProviderFailure(error)).toBe(true);
        expect(error).toMatchObject({ kind, code, retryAfterMs, upstreamStatus: status });
        expect(error.message).not.toContain(API_KEY);
        await eventually(() => expect(loopback.pool.snapshot().active).toBe(0));
      },
    );

    it.each([
      ['server_error', 'transient', 'upstream_error', 500],
      ['rate_limit_error', 'transient', 'rate_limited', 429],
      ['invalid_request_error', 'invalid_request', 'bad_request', 400],
      [undefined, 'transient', 'upstream_error', 500],
    ])('fails mid-stream on an error event of type %s as %s / %s', async (type, kind, code, status) => {
      const server = await upstream(
        raw(data(CHUNKS[0]), data(CHUNKS[1]), data({ error: { message: 'The server had an error', type } })),
      );

      const { error, before } = await failure(streamOf(server));

      expect(before).toEqual(CHUNKS.slice(0, 2));
      expect(isProviderFailure(error)).toBe(true);
      expect(error).toMatchObject({ kind, code, upstreamStatus: status });
      expect(error.message).not.toContain('The server had an error');
    });

    it.each([
      ['a data event that is not JSON', '{"choices": ['],
      ['a chunk without choices', JSON.stringify({ id: 'x', object: 'chat.completion.chunk' })],
      ['a choice without a delta', JSON.stringify({ choices: [{ index: 0 }] })],
      ['a usage without counts', JSON.stringify({ choices: [], usage: { prompt_tokens: 'many' } })],
    ])('fails as bad_response on %s', async (_name, payload) => {
      const server = await upstream(raw(data(CHUNKS[0]), data(payload), data('[DONE]')));

      const { error, before } = await failure(streamOf(server));

      expect(before).toEqual(CHUNKS.slice(0, 1));
      expect(error).toMatchObject({ kind: 'transient', code: 'bad_response', upstreamStatus: 200 });
    });

    it('fails as stream_cut when the answer ends without [DONE]', async () => {
      const server = await upstream(raw(...CHUNKS.map(data)));

      const { error, before } = await failure(streamOf(server));

      expect(before).toEqual(CHUNKS);
      expect(error).toMatchObject({ kind: 'transient', code: 'stream_cut' });
      expect(error.message).toBe('target openai/gpt-4o-mini ended its stream before the answer was complete');
    });

    it('fails as transient when the connection drops mid-stream, naming no address', async () => {
      const server = await upstream(streamed(CHUNKS, { cutAt: 2 }));

      const { error, before } = await failure(streamOf(server));

      expect(before).toEqual(CHUNKS.slice(0, 2));
      expect(error).toMatchObject({ kind: 'transient' });
      expect(error.message).not.toContain(String(server.port));
    });

    it('stops the request when the attempt is aborted mid-stream: the abort reason, and the upstream sees it go', async () => {
      const closed = deferred<void>();
      const server = await upstream(heldOpen(closed, data(CHUNKS[0]), data(CHUNKS[1])));
      const abort = new LazyAbortController();
      const reading = provider
        .stream(providerAttempt(target(server), REQUEST, { pool: loopback.pool, abort }))
        [Symbol.asyncIterator]();
      expect((await reading.next()).value).toEqual(CHUNKS[0]);
      expect((await reading.next()).value).toEqual(CHUNKS[1]);
      const pending = reading.next();
      const reason = new Error('attempt timed out');

      abort.abort(reason);

      await expect(pending).rejects.toBe(reason);
      await closed.promise;
      expect(server.abandoned).toBe(1);
      await eventually(() => expect(loopback.pool.snapshot().active).toBe(0));
    });

    it('closes the connection when the reader stops early', async () => {
      const closed = deferred<void>();
      const server = await upstream(heldOpen(closed, data(CHUNKS[0]), data(CHUNKS[1])));
      const reading = streamOf(server)[Symbol.asyncIterator]();
      await reading.next();

      await reading.return?.(undefined);

      await closed.promise;
      expect(server.abandoned).toBe(1);
      await eventually(() => expect(loopback.pool.snapshot().active).toBe(0));
    });
  });
});
