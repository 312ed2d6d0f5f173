import type { ServerResponse } from 'node:http';
import { LazyAbortController } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import { deferred } from '../../../test/support/deferred';
import { anthropicMessage as message } from '../../../test/support/llm-answers';
import { loopbackUpstreams } from '../../../test/support/loopback-upstreams';
import { providerAttempt } from '../../../test/support/provider-attempt';
import { rejection } from '../../../test/support/rejection';
import { json, type Upstream, type UpstreamHandler } from '../../../test/support/upstream';
import type { ChatChunk, ChatRequest } from '../chat.types';
import { AnthropicProvider } from './anthropic.provider';
import type { ProviderTarget } from './llm-provider';
import { isProviderFailure } from './provider-errors';

const API_KEY = 'sk-ant-test-93kd02';
const clock = new FakeClock(Date.UTC(2026, 4, 1, 12, 0, 0));
const provider = new AnthropicProvider(clock);

const loopback = loopbackUpstreams();
const { upstream } = loopback;

function target(server: Upstream, overrides: Partial<ProviderTarget> = {}): ProviderTarget {
  return {
    provider: 'anthropic',
    model: 'claude-haiku-4-5',
    baseUrl: server.url('/v1'),
    apiKey: API_KEY,
    ...overrides,
  };
}

const HELLO: ChatRequest = { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'Hello' }] };

/** What the upstream received as JSON, from its one request. */
function sent(server: Upstream): Record<string, unknown> {
  expect(server.requests).toHaveLength(1);
  return JSON.parse(server.requests[0].body) as Record<string, unknown>;
}

describe('AnthropicProvider', () => {
  describe('the request', () => {
    it('posts to {baseUrl}/messages with x-api-key, anthropic-version and only its own headers', async () => {
      const server = await upstream(json(200, message()));

      await provider.complete(
        providerAttempt(target(server), { ...HELLO, extra_headers: { 'x-secret': '1' } }, { pool: loopback.pool }),
      );

      const [received] = server.requests;
      expect(received.method).toBe('POST');
      expect(received.path).toBe('/v1/messages');
      expect(received.headers['x-api-key']).toBe(API_KEY);
      expect(received.headers['anthropic-version']).toBe('2023-06-01');
      expect(received.headers['content-type']).toBe('application/json');
      expect(received.headers.authorization).toBeUndefined();
      expect(Object.keys(received.headers).sort()).toEqual(
        ['accept', 'anthropic-version', 'connection', 'content-length', 'content-type', 'host', 'x-api-key'].sort(),
      );
    });

    it('translates a whole conversation with tools into the Messages API', async () => {
      const server = await upstream(json(200, message()));
      const request: ChatRequest = {
        model: 'claude-haiku-4-5',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
          { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
          {
            role: 'assistant',
            content: 'Checking both.',
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '18 C' },
          { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '24 C' }] },
          { role: 'assistant', content: 'Paris 18 C, Rome 24 C.' },
          { role: 'user', content: 'Thanks' },
        ],
        max_completion_tokens: 300,
        temperature: 1.7,
        top_p: 0.9,
        stop: 'END',
        tools: [
          {
            type: 'function',
            function: {
              name: 'weather',
              description: 'Current weather',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
          },
          { type: 'function', function: { name: 'now' } },
        ],
        tool_choice: 'required',
        parallel_tool_calls: false,
        presence_penalty: 0.5,
        seed: 3,
        user: 'u-1',
        stream: true,
        stream_options: { include_usage: true },
      };

      await provider.complete(providerAttempt(target(server), request, { pool: loopback.pool, maxOutputTokens: 300 }));

      expect(sent(server)).toEqual({
        model: 'claude-haiku-4-5',
        max_tokens: 300,
        system: [
          { type: 'text', text: 'You are terse.' },
          { type: 'text', text: 'Use metric units.' },
        ],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Checking both.' },
              { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Paris' } },
              { type: 'tool_use', id: 'call_2', name: 'weather', input: { city: 'Rome' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'call_1', content: '18 C' },
              { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '24 C' }] },
            ],
          },
          { role: 'assistant', content: 'Paris 18 C, Rome 24 C.' },
          { role: 'user', content: 'Thanks' },
        ],
        // Clamped to Anthropic's range.
        temperature: 1,
        top_p: 0.9,
        stop_sequences: ['END'],
        tools: [
          {
            name: 'weather',
            description: 'Current weather',
            input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
          { name: 'now', input_schema: { type: 'object', properties: {} } },
        ],
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
      });
    });

    it('sets max_tokens to the attempt cap whatever the client asked', async () => {
      const server = await upstream(json(200, message()));

      await provider.complete(
        providerAttempt(target(server), { ...HELLO, max_tokens: 9_999 }, { pool: loopback.pool, maxOutputTokens: 128 }),
      );

      expect(sent(server).max_tokens).toBe(128);
    });

    it('keeps a temperature within 0..1 and a list of stop sequences as they are', async () => {
      const server = await upstream(json(200, message()));

      await provider.complete(
        providerAttempt(target(server), { ...HELLO, temperature: 0.3, stop: ['a', 'b'] }, { pool: loopback.pool }),
      );

      expect(sent(server)).toMatchObject({ temperature: 0.3, stop_sequences: ['a', 'b'] });
    });

    const weather = { type: 'function' as const, function: { name: 'weather' } };
    it.each([
      ['auto', undefined, { type: 'auto' }],
      ['none', undefined, { type: 'none' }],
      ['required', undefined, { type: 'any' }],
      [{ type: 'function', function: { name: 'weather' } }, undefined, { type: 'tool', name: 'weather' }],
      [
        { type: 'function', function: { name: 'weather' } },
        false,
        { type: 'tool', name: 'weather', disable_parallel_tool_use: true },
      ],
      ['auto', false, { type: 'auto', disable_parallel_tool_use: true }],
      ['none', false, { type: 'none' }],
      [undefined, false, { type: 'auto', disable_parallel_tool_use: true }],
      [undefined, true, undefined],
      [undefined, undefined, undefined],
    ] as Array<[ChatRequest['tool_choice'], boolean | undefined, unknown]>)(
      'maps tool_choice %j with parallel_tool_calls %j to %j',
      async (toolChoice, parallel, expected) => {
        const server = await upstream(json(200, message()));
        const request: ChatRequest = {
          ...HELLO,
          tools: [weather],
          tool_choice: toolChoice,
          parallel_tool_calls: parallel,
        };

        await provider.complete(providerAttempt(target(server), request, { pool: loopback.pool }));

        expect(sent(server).tool_choice).toEqual(expected);
      },
    );

    it('sends no tool_choice without tools', async () => {
      const server = await upstream(json(200, message()));

      await provider.complete(
        providerAttempt(
          target(server),
          { ...HELLO, tool_choice: 'auto', parallel_tool_calls: false },
          { pool: loopback.pool },
        ),
      );

      expect(sent(server)).not.toHaveProperty('tool_choice');
      expect(sent(server)).not.toHaveProperty('tools');
    });

    it('sends images as image blocks: a data URL inline, an http(s) URL by reference, in user turns and tool results', async () => {
      const server = await upstream(json(200, message()));

      await provider.complete(
        providerAttempt(
          target(server),
          {
            ...HELLO,
            messages: [
              {
                role: 'user',
                content: [
                  { type: 'text', text: 'Compare' },
                  { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
                  { type: 'image_url', image_url: { url: 'https://example.com/b.jpg', detail: 'high' } },
                ],
              },
              {
                role: 'assistant',
                content: null,
                tool_calls: [{ id: 'c', type: 'function', function: { name: 'shot', arguments: '{}' } }],
              },
              {
                role: 'tool',
                tool_call_id: 'c',
                content: [{ type: 'image_url', image_url: { url: 'data:image/webp;base64,UklGR' } }],
              },
            ],
          },
          { pool: loopback.pool },
        ),
      );

      const [question, , results] = sent(server).messages as Array<{ content: unknown }>;
      expect(question.content).toEqual([
        { type: 'text', text: 'Compare' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/b.jpg' } },
      ]);
      expect(results.content).toEqual([
        {
          type: 'tool_result',
          tool_use_id: 'c',
          content: [{ type: 'image', source: { type: 'base64', media_type: 'image/webp', data: 'UklGR' } }],
        },
      ]);
    });

    const call = (args: string): ChatRequest => ({
      ...HELLO,
      messages: [
        { role: 'user', content: 'Hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: args } }],
        },
        { role: 'tool', tool_call_id: 'c', content: 'done' },
      ],
    });

    it.each([
      ['n above 1', { ...HELLO, n: 2 }, 'n must be 1'],
      [
        'an image that is no image type Anthropic takes',
        {
          ...HELLO,
          messages: [
            { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AAAA' } }] },
          ],
        },
        'images must be JPEG, PNG, GIF or WebP',
      ],
      [
        'an image by a file path',
        {
          ...HELLO,
          messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] }],
        },
        'an image is a data: URL or an http(s) URL',
      ],
      [
        'an image in a system message',
        {
          ...HELLO,
          messages: [
            { role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
            { role: 'user', content: 'x' },
          ],
        },
        "content parts of type 'image_url' are not supported",
      ],
      [
        'an audio part in a system message',
        {
          ...HELLO,
          messages: [
            { role: 'system', content: [{ type: 'input_audio' }] },
            { role: 'user', content: 'x' },
          ],
        },
        "content parts of type 'input_audio' are not supported",
      ],
      ['tool call arguments that are not JSON', call('{"city": Par'), 'the arguments of tool call 0 are not JSON'],
      [
        'tool call arguments that are not an object',
        call('[1,2]'),
        'the arguments of tool call 0 are not a JSON object',
      ],
      [
        'a JSON schema answer',
        { ...HELLO, response_format: { type: 'json_schema', json_schema: {} } },
        'response_format is not supported',
      ],
      ['logprobs', { ...HELLO, logprobs: true }, 'logprobs are not supported'],
      ['audio output', { ...HELLO, modalities: ['text', 'audio'] }, 'only text output is supported'],
      [
        'a custom tool',
        { ...HELLO, tools: [{ type: 'custom', custom: { name: 'x' } }] },
        "tools of type 'custom' are not supported",
      ],
    ] as Array<[string, ChatRequest, string]>)(
      'refuses %s as invalid_request before sending',
      async (_name, request, reason) => {
        const server = await upstream(json(200, message()));

        const error = await rejection(
          provider.complete(providerAttempt(target(server), request, { pool: loopback.pool })),
        );

        expect(error).toMatchObject({ kind: 'invalid_request', code: 'unsupported_request' });
        expect(error.message).toBe(`target anthropic/claude-haiku-4-5 cannot take this request: ${reason}`);
        expect(server.requests).toHaveLength(0);
      },
    );

    it('takes empty tool call arguments as no arguments', async () => {
      const server = await upstream(json(200, message()));

      await provider.complete(providerAttempt(target(server), call(''), { pool: loopback.pool }));

      expect((sent(server).messages as any[])[1].content).toEqual([
        { type: 'tool_use', id: 'c', name: 'f', input: {} },
      ]);
    });
  });

  describe('the answer', () => {
    it('translates text, tool use, stop reason and usage into a chat.completion', async () => {
      const server = await upstream(
        json(200, {
          id: 'msg_42',
          type: 'message',
          role: 'assistant',
          model: 'claude-haiku-4-5-20251001',
          content: [
            { type: 'thinking', thinking: 'hidden', signature: 's' },
            { type: 'text', text: 'Let me ' },
            { type: 'text', text: 'check.' },
            { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris', days: [1, 2] } },
            { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
          ],
          stop_reason: 'tool_use',
          stop_sequence: null,
          usage: {
            input_tokens: 100,
            output_tokens: 40,
            cache_read_input_tokens: 2_000,
            cache_creation_input_tokens: 300,
          },
        }),
      );

      const completion = await provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool }));

      expect(completion).toEqual({
        id: 'msg_42',
        object: 'chat.completion',
        created: Math.floor(Date.UTC(2026, 4, 1, 12, 0, 0) / 1000),
        model: 'claude-haiku-4-5-20251001',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Let me check.',
              refusal: null,
              tool_calls: [
                {
                  id: 'toolu_1',
                  type: 'function',
                  function: { name: 'weather', arguments: '{"city":"Paris","days":[1,2]}' },
                },
                { id: 'toolu_2', type: 'function', function: { name: 'now', arguments: '{}' } },
              ],
            },
            finish_reason: 'tool_calls',
            logprobs: null,
          },
        ],
        usage: {
          prompt_tokens: 2_400,
          completion_tokens: 40,
          total_tokens: 2_440,
          prompt_tokens_details: { cached_tokens: 2_000, cache_write_tokens: 300 },
        },
      });
    });

    it('answers null content beside tool calls, and an empty string when there is nothing at all', async () => {
      const server = await upstream(
        json(200, message({ content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] })),
      );
      const withTool = await provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool }));
      server.use(json(200, message({ content: [] })));
      const empty = await provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool }));

      expect(withTool.choices[0].message.content).toBeNull();
      expect(empty.choices[0].message.content).toBe('');
      expect(empty.choices[0].message).not.toHaveProperty('tool_calls');
    });

    it.each([
      ['end_turn', 'stop'],
      ['stop_sequence', 'stop'],
      ['pause_turn', 'stop'],
      ['max_tokens', 'length'],
      ['model_context_window_exceeded', 'length'],
      ['tool_use', 'tool_calls'],
      ['refusal', 'content_filter'],
      ['something_new', 'stop'],
      ['constructor', 'stop'],
    ])('maps stop_reason %s to finish_reason %s', async (stopReason, finishReason) => {
      const server = await upstream(json(200, message({ stop_reason: stopReason })));

      const completion = await provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool }));

      expect(completion.choices[0].finish_reason).toBe(finishReason);
    });

    it('counts no cached tokens when the answer reports no cache use', async () => {
      const server = await upstream(json(200, message()));

      const completion = await provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool }));

      expect(completion.usage).toEqual({
        prompt_tokens: 12,
        completion_tokens: 3,
        total_tokens: 15,
        prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      });
    });

    it.each([
      ['no usage', message({ usage: undefined })],
      ['no output token count', message({ usage: { input_tokens: 1 } })],
      ['no content list', message({ content: 'Hi.' })],
      ['a text block without text', message({ content: [{ type: 'text' }] })],
      ['a tool_use block without a name', message({ content: [{ type: 'tool_use', id: 't', input: {} }] })],
      ['no id', message({ id: undefined })],
    ])('fails as transient on a 200 with %s', async (_name, body) => {
      const server = await upstream(json(200, body));

      const error = await rejection(provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool })));

      expect(error).toMatchObject({ kind: 'transient', code: 'bad_response' });
    });
  });

  describe('failures', () => {
    const anthropicError = (type: string, text: string, details?: unknown) => ({
      type: 'error',
      error: { type, message: text, ...(details ? { details } : {}) },
      request_id: 'req_1',
    });

    it.each([
      [529, anthropicError('overloaded_error', 'Overloaded'), { 'retry-after': '4' }, 'transient', 'overloaded', 4_000],
      [
        429,
        anthropicError('rate_limit_error', 'Number of request tokens has exceeded'),
        { 'retry-after': '10' },
        'transient',
        'rate_limited',
        10_000,
      ],
      [
        429,
        anthropicError('rate_limit_error', 'spend limit reached', { error_code: 'enforced_spend_limit_reached' }),
        { 'retry-after': '10' },
        'unavailable',
        'insufficient_quota',
        undefined,
      ],
      [
        402,
        anthropicError('billing_error', 'Your credit balance is too low'),
        {},
        'unavailable',
        'insufficient_quota',
        undefined,
      ],
      [500, anthropicError('api_error', 'Internal server error'), {}, 'transient', 'upstream_error', undefined],
      [504, anthropicError('timeout_error', 'Request timeout'), {}, 'transient', 'upstream_timeout', undefined],
      [
        400,
        anthropicError('invalid_request_error', 'messages: roles must alternate'),
        {},
        'invalid_request',
        'bad_request',
        undefined,
      ],
      [
        413,
        anthropicError('request_too_large', 'Request exceeds the maximum size'),
        {},
        'invalid_request',
        'request_too_large',
        undefined,
      ],
      [
        401,
        anthropicError('authentication_error', `invalid x-api-key ${API_KEY}`),
        {},
        'unavailable',
        'unauthorized',
        undefined,
      ],
      [403, anthropicError('permission_error', 'no access'), {}, 'unavailable', 'forbidden', undefined],
      [404, anthropicError('not_found_error', 'model: claude-x'), {}, 'unavailable', 'model_not_found', undefined],
    ] as Array<[number, unknown, Record<string, string>, string, string, number | undefined]>)(
      'maps %i %j (headers %j) to %s / %s',
      async (status, body, headers, kind, code, retryAfterMs) => {
        const server = await upstream(json(status, body, headers));

        const error = await rejection(
          provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool })),
        );

        expect(isProviderFailure(error)).toBe(true);
        expect(error).toMatchObject({ kind, code, retryAfterMs, upstreamStatus: status });
        expect(error.message).toMatch(new RegExp(`^target anthropic/claude-haiku-4-5 answered ${status}: [a-z ]+$`));
        expect(error.message).not.toContain(API_KEY);
        expect(error.message).not.toContain(String(server.port));
        expect(error.message).not.toContain((body as any).error.message);
      },
    );
  });

  describe('streaming', () => {
    const CREATED = Math.floor(Date.UTC(2026, 4, 1, 12, 0, 0) / 1000);
    const START = {
      type: 'message_start',
      message: {
        id: 'msg_s1',
        type: 'message',
        role: 'assistant',
        model: 'claude-haiku-4-5-20251001',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 1 },
      },
    };
    const TEXT_START = { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } };
    const text = (piece: string) => ({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: piece },
    });
    const TEXT_STREAM = [
      START,
      TEXT_START,
      { type: 'ping' },
      text('Hello'),
      text(' there.'),
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } },
      { type: 'message_stop' },
    ];

    /** Events as Anthropic writes them on the wire. */
    const sse = (...events: unknown[]) =>
      events.map((event) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
    const startStream = (response: ServerResponse) =>
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    /** A handler writing each of `writes` in turn, then ending the answer. */
    const streamed =
      (...writes: string[]): UpstreamHandler =>
      (_request, response) => {
        startStream(response);
        for (const piece of writes) response.write(piece);
        response.end();
      };
    /** A handler writing `events`, then holding the answer open; `onClose` hears the client go. */
    const heldOpen =
      (onClose: () => void, ...events: unknown[]): UpstreamHandler =>
      (_request, response) => {
        response.on('close', onClose);
        startStream(response);
        response.write(sse(...events));
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

    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
      id: 'msg_s1',
      object: 'chat.completion.chunk',
      created: CREATED,
      model: 'claude-haiku-4-5-20251001',
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
      usage: null,
    });

    it('posts the request with stream: true for text/event-stream, and translates the stream whole', async () => {
      const wire = sse(...TEXT_STREAM);
      // One event cut in the middle of its JSON, and of a CRLF-free line, across writes.
      const cut = wire.indexOf('Hello') + 2;
      const server = await upstream(streamed(wire.slice(0, cut), wire.slice(cut)));

      const chunks = await collect(
        provider.stream(providerAttempt(target(server), { ...HELLO, temperature: 0.5 }, { pool: loopback.pool })),
      );

      const [received] = server.requests;
      expect(received.path).toBe('/v1/messages');
      expect(received.headers.accept).toBe('text/event-stream');
      expect(received.headers['x-api-key']).toBe(API_KEY);
      expect(received.headers['anthropic-version']).toBe('2023-06-01');
      expect(sent(server)).toEqual({
        model: 'claude-haiku-4-5',
        max_tokens: 256,
        messages: [{ role: 'user', content: 'Hello' }],
        temperature: 0.5,
        stream: true,
      });
      expect(chunks).toEqual([
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: 'Hello' }),
        chunk({ content: ' there.' }),
        chunk({}, 'stop'),
        {
          ...chunk({}),
          choices: [],
          usage: {
            prompt_tokens: 132,
            completion_tokens: 5,
            total_tokens: 137,
            prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
          },
        },
      ]);
    });

    it('streams tool calls as OpenAI does: id and name first, then the arguments in pieces', async () => {
      const server = await upstream(
        streamed(
          sse(
            START,
            {
              type: 'content_block_start',
              index: 0,
              content_block: { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} },
            },
            { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city"' } },
            { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: ':"Paris"}' } },
            { type: 'content_block_stop', index: 0 },
            { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
            { type: 'message_stop' },
          ),
        ),
      );

      const chunks = await collect(provider.stream(providerAttempt(target(server), HELLO, { pool: loopback.pool })));

      expect(chunks.slice(1, -1)).toEqual([
        chunk({
          tool_calls: [{ index: 0, id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '' } }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city"' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: ':"Paris"}' } }] }),
        chunk({}, 'tool_calls'),
      ]);
      expect(chunks.at(-1)?.usage).toMatchObject({ completion_tokens: 9 });
    });

    it.each([
      [529, 'overloaded', 'overloaded_error', 4_000],
      [429, 'rate_limited', 'rate_limit_error', 4_000],
    ])(
      'fails on a %i before the stream as transient / %s, with its Retry-After',
      async (status, code, type, retryAfterMs) => {
        const server = await upstream(
          json(status, { type: 'error', error: { type, message: 'busy' } }, { 'retry-after': '4' }),
        );

        const { error, before } = await failure(
          provider.stream(providerAttempt(target(server), HELLO, { pool: loopback.pool })),
        );

        expect(before).toEqual([]);
        expect(error).toMatchObject({ kind: 'transient', code, retryAfterMs, upstreamStatus: status });
      },
    );

    it('fails mid-stream on an error event, as the failure its type names', async () => {
      const server = await upstream(
        streamed(
          sse(START, TEXT_START, text('Hel'), {
            type: 'error',
            error: { type: 'overloaded_error', message: 'Overloaded' },
          }),
        ),
      );

      const { error, before } = await failure(
        provider.stream(providerAttempt(target(server), HELLO, { pool: loopback.pool })),
      );

      expect(before).toEqual([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' })]);
      expect(error).toMatchObject({ kind: 'transient', code: 'overloaded', upstreamStatus: 529 });
    });

    it('fails as stream_cut when the answer ends before message_stop', async () => {
      const server = await upstream(streamed(sse(...TEXT_STREAM.slice(0, -1))));

      const { error, before } = await failure(
        provider.stream(providerAttempt(target(server), HELLO, { pool: loopback.pool })),
      );

      expect(before).toHaveLength(4);
      expect(error).toMatchObject({ kind: 'transient', code: 'stream_cut' });
    });

    it('fails as transient when the connection drops before message_stop', async () => {
      const server = await upstream((_request, response) => {
        startStream(response);
        response.write(sse(START, TEXT_START, text('Hel')), () => response.destroy());
      });

      const { error, before } = await failure(
        provider.stream(providerAttempt(target(server), HELLO, { pool: loopback.pool })),
      );

      expect(before).toHaveLength(2);
      expect(error).toMatchObject({ kind: 'transient', code: 'unreachable' });
      expect(error.message).not.toContain(String(server.port));
    });

    it('fails as bad_response on an event larger than the limit', async () => {
      const server = await upstream(streamed(sse(START), `data: ${'x'.repeat(1024 * 1024 + 1)}`));

      const { error, before } = await failure(
        provider.stream(providerAttempt(target(server), HELLO, { pool: loopback.pool })),
      );

      expect(before).toHaveLength(1);
      expect(error).toMatchObject({ kind: 'transient', code: 'bad_response' });
    });

    it('stops the request when the attempt is aborted mid-stream, with the abort reason', async () => {
      const closed = deferred<void>();
      const server = await upstream(heldOpen(() => closed.resolve(), START));
      const abort = new LazyAbortController();
      const chunks = provider.stream(providerAttempt(target(server), HELLO, { pool: loopback.pool, abort }));
      const reading = chunks[Symbol.asyncIterator]();
      expect((await reading.next()).value).toEqual(chunk({ role: 'assistant', content: '' }));
      const reason = new Error('attempt timed out');

      abort.abort(reason);

      await expect(reading.next()).rejects.toBe(reason);
      await closed.promise;
      expect(server.abandoned).toBe(1);
    });

    it('closes the connection when the reader stops early', async () => {
      const closed = deferred<void>();
      const server = await upstream(heldOpen(() => closed.resolve(), START, TEXT_START, text('Hel')));
      const reading = provider
        .stream(providerAttempt(target(server), HELLO, { pool: loopback.pool }))
        [Symbol.asyncIterator]();
      await reading.next();

      await reading.return?.(undefined);

      await closed.promise;
      expect(server.abandoned).toBe(1);
      expect(loopback.pool.snapshot().active).toBe(0);
    });

    it('refuses an untranslatable request before sending', async () => {
      const server = await upstream(streamed(sse(...TEXT_STREAM)));

      const { error } = await failure(
        provider.stream(providerAttempt(target(server), { ...HELLO, n: 2 }, { pool: loopback.pool })),
      );

      expect(error).toMatchObject({ kind: 'invalid_request', code: 'unsupported_request' });
      expect(server.requests).toHaveLength(0);
    });
  });
});
