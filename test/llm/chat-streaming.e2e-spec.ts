import OpenAI from 'openai';
import { request } from 'undici';
import { FakeClock } from '../../src/common/fake-clock';
import type { ChatRequest } from '../../src/llm/chat.types';
import { estimateInputTokens } from '../../src/llm/pricing';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { deferred, type Deferred } from '../support/deferred';
import { eventually } from '../support/eventually';
import { send } from '../support/http-client';
import { openaiAnswer } from '../support/llm-answers';
import { getLanes } from '../support/service-reads';
import { openaiChunks, streamChat, streamed, streamedText } from '../support/sse';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { hang, heldIn, json, Upstream } from '../support/upstream';

const ACME = testTenant('acme');
const PRICE = { inputPerMTokUsd: 1, outputPerMTokUsd: 1 };
const HELLO = { model: 'chat', messages: [{ role: 'user' as const, content: 'hello' }] };

describe.each(PLATFORMS)('POST /v1/chat/completions with stream: true, on %s', (platform) => {
  let primary: Upstream;
  let secondary: Upstream;
  let app: TestApp;

  const client = () => new OpenAI({ apiKey: ACME.key, baseURL: `${app.url}/v1`, maxRetries: 0 });
  const asAcme = { authorization: `Bearer ${ACME.key}` };

  const targets = () => [
    { provider: 'openai', model: 'gpt-primary', baseUrl: primary.url('/v1') },
    { provider: 'openai', model: 'gpt-secondary', baseUrl: secondary.url('/v1') },
  ];

  async function start(route: Record<string, unknown> = {}, extra: Record<string, unknown> = {}, clock?: FakeClock) {
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey], adminToken: ADMIN_TOKEN },
        lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
        llm: {
          routes: {
            chat: {
              lane: 'llm',
              targets: targets(),
              retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
              ...route,
            },
          },
          prices: { 'openai/gpt-primary': PRICE, 'openai/gpt-secondary': PRICE },
        },
        ...extra,
      },
      { platform, clock },
    );
  }

  beforeEach(async () => {
    primary = await Upstream.start(streamed(openaiChunks(['Hel', 'lo ', 'there'], { model: 'gpt-primary' })));
    secondary = await Upstream.start(streamed(openaiChunks(['from ', 'secondary'], { model: 'gpt-secondary' })));
  });

  afterEach(async () => {
    await app?.close();
    await primary.close();
    await secondary.close();
  });

  it('streams through the openai SDK: chunks in order, the usage chunk when asked for, the headers at the commit', async () => {
    await start();

    const { data: stream, response } = await client()
      .chat.completions.create({ ...HELLO, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('x-bulkhead-served-by')).toBe('openai/gpt-primary');
    expect(response.headers.get('x-bulkhead-attempts')).toBe('1');
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('Hello there');
    expect(chunks.at(-2)?.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 3 } });
    expect((chunks.at(-1) as unknown as { bulkhead: Record<string, unknown> }).bulkhead).toMatchObject({
      servedBy: 'openai/gpt-primary',
      attempts: 1,
      costUsd: 0.000015,
    });
    // The provider is always asked for its usage, which is what the attempt is charged.
    expect(JSON.parse(primary.requests[0].body)).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    const metrics = await send('GET', `${app.url}/metrics`);
    expect(metrics.body).toContain(
      'bulkhead_llm_time_to_first_token_seconds_count{route="chat",target="openai/gpt-primary"} 1',
    );
  });

  it('leaves the usage chunk out for a client that did not ask for it, and ends with [DONE]', async () => {
    await start();

    const answer = await streamChat(app.url, HELLO, asAcme);

    expect(answer.status).toBe(200);
    expect(answer.done).toBe(true);
    expect(streamedText(answer.chunks)).toBe('Hello there');
    expect(answer.chunks.every((chunk) => chunk.usage === undefined && chunk.choices.length === 1)).toBe(true);
  });

  it('serves a stream whose first target fails before its first byte whole from the next, unseen by the client', async () => {
    primary.use(json(503, { error: { message: 'overloaded' } }));
    await start();

    const answer = await streamChat(app.url, HELLO, asAcme);

    expect(answer.status).toBe(200);
    expect(answer.headers['x-bulkhead-served-by']).toBe('openai/gpt-secondary');
    expect(answer.headers['x-bulkhead-attempts']).toBe('2');
    expect(streamedText(answer.chunks)).toBe('from secondary');
    expect(answer.done).toBe(true);
  });

  it('fails over when a target breaks its stream before any content', async () => {
    primary.use(streamed(openaiChunks(['never']), { cutAt: 1 }));
    await start();

    const answer = await streamChat(app.url, HELLO, asAcme);

    expect(streamedText(answer.chunks)).toBe('from secondary');
    expect(answer.done).toBe(true);
  });

  it('ends a stream cut after its first chunk with an error event and no [DONE], and charges what was sent', async () => {
    primary.use(streamed(openaiChunks(['Hel', 'lo ', 'there']), { cutAt: 2 }));
    await start({}, { budgets: { tenants: { acme: 1 } } });

    const answer = await streamChat(app.url, HELLO, asAcme);

    expect(answer.status).toBe(200);
    expect(answer.done).toBe(false);
    expect(streamedText(answer.chunks)).toBe('Hel');
    expect(answer.chunks.at(-1)).toMatchObject({ error: { kind: 'transient', type: 'transient', code: 'transient' } });
    // Nothing else was tried: the client has part of the answer.
    expect(secondary.requests).toHaveLength(0);
    const view = await send('GET', `${app.url}/v1/admin/budgets/acme`, { headers: AS_ADMIN });
    // No usage came: the prompt at its estimate and one token for the one content chunk ("Hel").
    const prompt = estimateInputTokens({ ...HELLO, stream: true, max_tokens: 4096 } as ChatRequest);
    expect(view.body).toMatchObject({ spentUsd: (prompt + 1) / 1_000_000, reservedUsd: 0 });
  });

  it('makes an openai SDK stream that breaks mid-way throw, not end as if complete', async () => {
    primary.use(streamed(openaiChunks(['Hel', 'lo ', 'there']), { cutAt: 3 }));
    await start();

    const stream = await client().chat.completions.create({ ...HELLO, stream: true });
    const read: string[] = [];
    const reading = (async () => {
      for await (const chunk of stream) read.push(chunk.choices[0]?.delta.content ?? '');
    })();

    await expect(reading).rejects.toThrow();
    expect(read.join('')).toBe('Hello ');
  });

  it('replays a cached answer as a stream, at no cost and with no provider call', async () => {
    await start();

    const first = await streamChat(app.url, HELLO, asAcme);
    const again = await streamChat(app.url, { ...HELLO, stream_options: { include_usage: true } }, asAcme);

    expect(first.headers['x-bulkhead-cache']).toBe('miss');
    expect(again.headers['x-bulkhead-cache']).toBe('hit');
    expect(streamedText(again.chunks)).toBe('Hello there');
    expect(again.done).toBe(true);
    expect(again.chunks.at(-1)).toMatchObject({ bulkhead: { fromCache: true, costUsd: 0 } });
    expect(primary.requests).toHaveLength(1);
  });

  it('answers a JSON request from an answer cached by a stream', async () => {
    await start();

    await streamChat(app.url, HELLO, asAcme);
    const answer = await client().chat.completions.create(HELLO).withResponse();

    expect(answer.response.headers.get('x-bulkhead-cache')).toBe('hit');
    expect(answer.data.choices[0].message.content).toBe('Hello there');
  });

  it('answers an error before the commit point as an ordinary JSON error', async () => {
    primary.use(json(400, { error: { message: 'bad' } }));
    secondary.use(json(400, { error: { message: 'bad' } }));
    await start();

    const answer = await streamChat(app.url, HELLO, asAcme);

    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toContain('application/json');
    expect(JSON.parse(answer.events[0])).toMatchObject({ error: { kind: 'invalid_request' } });
  });

  it('stops the provider request and frees the lane slot when the client disconnects mid-stream', async () => {
    const gates = new Map([[2, deferred<void>()]]);
    primary.use(streamed(openaiChunks(['Hel', 'lo ', 'there']), { gates }));
    await start();

    const abort = new AbortController();
    const reading = streamChat(app.url, HELLO, asAcme, abort.signal);
    await eventually(async () => expect((await getLanes(app.url)).llm.active).toBe(1));
    await eventually(() => expect(primary.inFlight).toBe(1));
    abort.abort();

    await expect(reading).rejects.toThrow();
    await eventually(() => expect(primary.abandoned).toBe(1));
    await eventually(async () => expect((await getLanes(app.url)).llm.active).toBe(0));
    gates.get(2)!.resolve();
  });

  it('replays a keyed stream to a repeat of its Idempotency-Key as a stream, from one provider call', async () => {
    await start({ cache: false });
    const keyed = { ...asAcme, 'idempotency-key': 'summary-of-order-7' };

    const withUsage = { ...HELLO, stream_options: { include_usage: true } };

    const first = await streamChat(app.url, withUsage, keyed);
    const again = await streamChat(app.url, withUsage, keyed);

    expect(streamedText(first.chunks)).toBe('Hello there');
    expect(streamedText(again.chunks)).toBe('Hello there');
    expect(again.done).toBe(true);
    expect(again.chunks.at(-1)).toMatchObject({ bulkhead: { replayed: true, costUsd: 0 } });
    expect(primary.requests).toHaveLength(1);
  });

  it('streams an Anthropic target translated into OpenAI chunks', async () => {
    const events = [
      [
        'message_start',
        {
          type: 'message_start',
          message: { id: 'msg_1', model: 'claude-test', usage: { input_tokens: 9, output_tokens: 1 } },
        },
      ],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Ho' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'la' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }],
      ['message_stop', { type: 'message_stop' }],
    ] as const;
    primary.use((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join(''));
    });
    await start({ targets: [{ provider: 'anthropic', model: 'claude-test', baseUrl: primary.url('/v1') }] }, {});

    const stream = await client().chat.completions.create({
      ...HELLO,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('Hola');
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 2 });
    expect(JSON.parse(primary.requests[0].body)).toMatchObject({ stream: true, model: 'claude-test' });
  });

  it('holds a stream back while its client reads nothing: the upstream is stopped by TCP, not buffered in the service', async () => {
    const piece = 'x'.repeat(16 * 1024);
    let written = 0;
    let waitingForDrain = false;
    primary.use(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (content: string) =>
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null, logprobs: null }] })}\n\n`;
      // Up to 1 GiB: far more than any buffer on the way could hold.
      for (let index = 0; index < 65_536 && !response.destroyed; index++) {
        const text = chunk(piece);
        written += text.length;
        if (!response.write(text)) {
          waitingForDrain = true;
          await new Promise((resolve) => {
            response.once('drain', resolve);
            response.once('close', resolve);
          });
          waitingForDrain = false;
        }
      }
      response.end('data: [DONE]\n\n');
    });
    await start({ idleTimeoutMs: 600_000 });

    const abort = new AbortController();
    const answer = await request(`${app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...asAcme },
      // A cap whose answer may be larger than the sockets' buffers (256 characters a token):
      // what stops the upstream here is TCP, not the answer's bound.
      body: JSON.stringify({ ...HELLO, stream: true, max_tokens: 500_000 }),
      signal: abort.signal,
    });
    expect(answer.statusCode).toBe(200);
    // Nobody reads the body: the upstream must come to a stop, waiting for the socket to drain,
    // and stay stopped (20 looks in a row, 10 ms apart, with nothing more written).
    let still = 0;
    let seen = -1;
    await eventually(async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      still = waitingForDrain && written === seen ? still + 1 : 0;
      seen = written;
      expect(still).toBeGreaterThanOrEqual(20);
    });

    // What the sockets' buffers hold on loopback (about 8 MB here), not the gigabyte on offer.
    expect(written).toBeLessThan(32 * 1024 * 1024);
    abort.abort();
    answer.body.on('error', () => undefined);
    await eventually(() => expect(primary.abandoned).toBe(1));
    await eventually(async () => expect((await getLanes(app.url)).llm.active).toBe(0));
  });

  describe('in virtual time', () => {
    let clock: FakeClock;

    beforeEach(() => {
      clock = new FakeClock();
    });

    it('fails over when the first target sends no content within firstByteTimeoutMs', async () => {
      primary.use(hang);
      await start({ firstByteTimeoutMs: 5_000 }, {}, clock);

      const answering = streamChat(app.url, HELLO, asAcme);
      await eventually(() => expect(primary.requests).toHaveLength(1));
      await clock.advanceAsync(4_999);
      expect(secondary.requests).toHaveLength(0);
      await clock.advanceAsync(1);
      const answer = await answering;

      expect(streamedText(answer.chunks)).toBe('from secondary');
      await eventually(() => expect(primary.abandoned).toBe(1));
    });

    it('ends a stream whose target goes silent for idleTimeoutMs after its first content with an error event', async () => {
      const gates = new Map([[2, deferred<void>()]]);
      primary.use(streamed(openaiChunks(['Hel', 'lo ', 'there']), { gates }));
      await start({ idleTimeoutMs: 2_000 }, {}, clock);

      const answering = streamChat(app.url, HELLO, asAcme);
      await eventually(() => expect(primary.inFlight).toBe(1));
      // The commit came (a chunk with content): the idle timer runs from the last chunk.
      await eventually(async () => expect((await getLanes(app.url)).llm.active).toBe(1));
      await clock.advanceAsync(2_000);
      const answer = await answering;

      expect(answer.done).toBe(false);
      expect(streamedText(answer.chunks)).toBe('Hel');
      expect(answer.chunks.at(-1)).toMatchObject({ error: { kind: 'timeout' } });
      await eventually(() => expect(primary.abandoned).toBe(1));
      gates.get(2)!.resolve();
    });

    it('hedges a slow target: answers from the next once hedgeAfterMs passed, and cancels the slow one', async () => {
      const held: Array<Deferred<void>> = [];
      primary.use(heldIn(held, json(200, openaiAnswer('slow'))));
      secondary.use(json(200, openaiAnswer('fast', undefined, 'gpt-secondary')));
      await start({ hedgeAfterMs: 300 }, {}, clock);

      const answering = client().chat.completions.create(HELLO).withResponse();
      await eventually(() => expect(primary.requests).toHaveLength(1));
      await clock.advanceAsync(299);
      expect(secondary.requests).toHaveLength(0);
      await clock.advanceAsync(1);
      const { data, response } = await answering;

      expect(data.choices[0].message.content).toBe('fast');
      expect(response.headers.get('x-bulkhead-hedged')).toBe('true');
      expect((data as unknown as { bulkhead: { hedged: boolean } }).bulkhead.hedged).toBe(true);
      // The slow target saw its request cancelled: its connection closed before it answered.
      await eventually(() => expect(primary.abandoned).toBe(1));
      const metrics = await send('GET', `${app.url}/metrics`);
      expect(metrics.body).toContain('bulkhead_llm_hedges_total{route="chat",result="won"} 1');
      for (const gate of held) gate.resolve();
    });

    it('hedges a stream up to its commit point: the first target to send content wins', async () => {
      const gates = new Map([[1, deferred<void>()]]);
      primary.use(streamed(openaiChunks(['slow']), { gates }));
      await start({ hedgeAfterMs: 300 }, {}, clock);

      const answering = streamChat(app.url, HELLO, asAcme);
      await eventually(() => expect(primary.requests).toHaveLength(1));
      await clock.advanceAsync(300);
      const answer = await answering;

      expect(streamedText(answer.chunks)).toBe('from secondary');
      expect(answer.headers['x-bulkhead-hedged']).toBe('true');
      await eventually(() => expect(primary.abandoned).toBe(1));
      gates.get(1)!.resolve();
    });

    it('never hedges to a target that just answered 429', async () => {
      secondary.use(json(429, { error: { message: 'slow down' } }, { 'retry-after-ms': '60000' }));
      await start({ hedgeAfterMs: 300 }, {}, clock);
      // The secondary answers one request with 429 (the primary failing over to it).
      primary.use(json(500, { error: { message: 'down' } }));
      await client()
        .chat.completions.create(HELLO)
        .catch(() => undefined);
      const before = secondary.requests.length;

      const held: Array<Deferred<void>> = [];
      primary.use(heldIn(held, json(200, openaiAnswer('slow but sure'))));
      const answering = client().chat.completions.create({ ...HELLO, messages: [{ role: 'user', content: 'again' }] });
      await eventually(() => expect(held).toHaveLength(1));
      await clock.advanceAsync(1_000);
      expect(secondary.requests).toHaveLength(before);
      held[0].resolve();

      expect((await answering).choices[0].message.content).toBe('slow but sure');
    });
  });
});
