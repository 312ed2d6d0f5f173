import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import { FakeClock } from '../../src/common/fake-clock';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { deferred, type Deferred } from '../support/deferred';
import { eventually } from '../support/eventually';
import { getLanes } from '../support/service-reads';
import { openaiChunks, sseData } from '../support/sse';
import { ADMIN_TOKEN, testTenant } from '../support/tenants';
import { Upstream, type UpstreamHandler } from '../support/upstream';

/**
 * An OpenAI target's stream passed through the chat route: its events as they came, one write per
 * read of the upstream, the chunks the route changes (the usage chunk, usage fields a client did
 * not ask for, fields the provider left out) written again. Each test checks the bytes its client
 * gets against what the route wrote before the pass-through: every chunk as `data:
 * JSON.stringify(chunk)\n\n`.
 */
const ACME = testTenant('acme');
const asAcme = { authorization: `Bearer ${ACME.key}` };
const PRICE = { inputPerMTokUsd: 1, outputPerMTokUsd: 1 };
const HELLO = { model: 'chat', messages: [{ role: 'user' as const, content: 'hello' }] };

const frame = (chunk: object) => `data: ${JSON.stringify(chunk)}\n\n`;
const DONE = 'data: [DONE]\n\n';

/** An upstream that writes `pieces` as they are, each once the one before it left, waiting at each gate. */
function raw(pieces: Array<string | Deferred<void>>, end = true): UpstreamHandler {
  return async (_request, response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const piece of pieces) {
      if (typeof piece !== 'string') {
        await piece.promise;
        continue;
      }
      if (response.destroyed) return;
      await new Promise<void>((resolve) => response.write(piece, () => resolve()));
    }
    if (end) response.end();
    else response.socket?.destroy();
  };
}

/** A streamed request read as it arrives: the text so far, and the whole text at its end. */
function openStream(base: string, body: Record<string, unknown>) {
  let text = '';
  let status = 0;
  const ended = (async () => {
    const response = await request(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...asAcme },
      body: JSON.stringify({ stream: true, ...body }),
    });
    status = response.statusCode;
    response.body.setEncoding('utf8');
    for await (const piece of response.body) text += piece as string;
    return text;
  })();
  return { ended, text: () => text, status: () => status };
}

describe.each(PLATFORMS)('an OpenAI target streamed through the chat route, on %s', (platform) => {
  let upstream: Upstream;
  let app: TestApp;

  async function start(route: Record<string, unknown> = {}, clock?: FakeClock) {
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey], adminToken: ADMIN_TOKEN },
        lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
        llm: {
          routes: {
            chat: {
              lane: 'llm',
              targets: [{ provider: 'openai', model: 'gpt-test', baseUrl: upstream.url('/v1') }],
              retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
              ...route,
            },
          },
          prices: { 'openai/gpt-test': PRICE },
        },
      },
      { platform, clock },
    );
  }

  beforeEach(async () => {
    upstream = await Upstream.start();
  });

  afterEach(async () => {
    await app?.close();
    await upstream.close();
  });

  it('sends the chunks as the route wrote them before, and the usage chunk with its bulkhead field', async () => {
    const chunks = openaiChunks(['Hel', 'lo ', 'wörld 😀']);
    upstream.use(raw([...chunks.map(frame), DONE]));
    await start();

    const { ended } = openStream(app.url, { ...HELLO, stream_options: { include_usage: true } });
    const text = await ended;

    const usage = chunks.at(-1)!;
    const sent = sseData(text);
    const bulkhead = (JSON.parse(sent.at(-2)!) as { bulkhead: unknown }).bulkhead;
    expect(bulkhead).toMatchObject({ servedBy: 'openai/gpt-test', attempts: 1, fromCache: false, hedged: false });
    expect(text).toBe([...chunks.slice(0, -1).map(frame), frame({ ...usage, bulkhead }), DONE].join(''));
  });

  it('leaves out the usage chunk and every usage: null field for a client that did not ask for usage', async () => {
    // OpenAI sends `usage: null` in every chunk but the last when asked for usage, as the route always asks.
    const chunks = openaiChunks(['Hel', 'lo']).map((chunk) => ({ usage: null, ...chunk }));
    const nullLast = openaiChunks(['there'])
      .slice(1, 2)
      .map((chunk) => ({ ...chunk, usage: null }));
    upstream.use(raw([...chunks.slice(0, -1).map(frame), ...nullLast.map(frame), frame(chunks.at(-1)!), DONE]));
    await start();

    const text = await openStream(app.url, HELLO).ended;

    const without = ({ usage: _usage, ...chunk }: Record<string, unknown>) => chunk;
    expect(text).toBe(
      [...chunks.slice(0, -1).map(without).map(frame), ...nullLast.map(without).map(frame), DONE].join(''),
    );
  });

  it('fills in the fields a chunk left out, as before', async () => {
    const [role, content, finish] = openaiChunks(['Hel'], { usage: null }) as Array<Record<string, unknown>>;
    const { object: _object, created: _created, ...bare } = content!;
    upstream.use(raw([frame(role!), frame(bare), frame(finish!), DONE]));
    await start();

    const text = await openStream(app.url, HELLO).ended;

    const filled = JSON.parse(sseData(text)[1]!) as Record<string, unknown>;
    expect(filled).toMatchObject({ object: 'chat.completion.chunk', created: expect.any(Number) });
    expect(text).toBe(
      [
        frame(role!),
        frame({ ...bare, object: 'chat.completion.chunk', created: filled.created }),
        frame(finish!),
        DONE,
      ].join(''),
    );
  });

  it('reads an event split across two reads of the upstream', async () => {
    const chunks = openaiChunks(['Hel', 'lo'], { usage: null });
    const second = frame(chunks[2]!);
    const gate = deferred<void>();
    upstream.use(
      raw([
        frame(chunks[0]!) + frame(chunks[1]!) + second.slice(0, 40),
        gate,
        second.slice(40),
        frame(chunks[3]!),
        DONE,
      ]),
    );
    await start();

    const stream = openStream(app.url, HELLO);
    // The first content went out with the read that held half of the next event.
    await eventually(() => expect(stream.text()).toBe(frame(chunks[0]!) + frame(chunks[1]!)));
    gate.resolve();

    expect(await stream.ended).toBe([...chunks.map(frame), DONE].join(''));
  });

  it('reads several events of one read, CRLF line endings, comments and keep-alive lines', async () => {
    const chunks = openaiChunks(['Hel', 'lo'], { usage: null });
    const crlf = (chunk: object) => `data: ${JSON.stringify(chunk)}\r\n\r\n`;
    upstream.use(
      raw([
        ': ping\n\n' + crlf(chunks[0]!) + ': keep-alive\r\n' + crlf(chunks[1]!),
        `${crlf(chunks[2]!)}: ping\n\n${crlf(chunks[3]!)}data: [DONE]\r\n\r\n`,
      ]),
    );
    await start();

    expect(await openStream(app.url, HELLO).ended).toBe([...chunks.map(frame), DONE].join(''));
  });

  it("ends with the route's error event, after what came before it, when the upstream sends an error event after the commit", async () => {
    const chunks = openaiChunks(['Hel', 'lo'], { usage: null });
    const error = { error: { message: 'The server had an error', type: 'server_error', param: null, code: null } };
    upstream.use(raw([frame(chunks[0]!) + frame(chunks[1]!), frame(chunks[2]!) + frame(error), DONE]));
    await start();

    const stream = openStream(app.url, HELLO);
    const text = await stream.ended;

    expect(stream.status()).toBe(200);
    const events = sseData(text);
    expect(text.startsWith([frame(chunks[0]!), frame(chunks[1]!), frame(chunks[2]!)].join(''))).toBe(true);
    expect(events).toHaveLength(4);
    expect(JSON.parse(events[3]!)).toMatchObject({ error: { kind: 'transient', type: 'transient' } });
  });

  it('ends with an error event and no [DONE] when the upstream ends without [DONE]', async () => {
    const chunks = openaiChunks(['Hel', 'lo'], { usage: null });
    upstream.use(raw([frame(chunks[0]!) + frame(chunks[1]!) + frame(chunks[2]!)]));
    await start();

    const text = await openStream(app.url, HELLO).ended;

    const events = sseData(text);
    expect(text.startsWith([frame(chunks[0]!), frame(chunks[1]!), frame(chunks[2]!)].join(''))).toBe(true);
    expect(events).toHaveLength(4);
    expect(JSON.parse(events[3]!)).toMatchObject({ error: { kind: 'transient' } });
    expect(text.includes('[DONE]')).toBe(false);
  });

  it('ends whole, with no usage chunk, when the upstream sends none', async () => {
    const chunks = openaiChunks(['Hel', 'lo'], { usage: null });
    upstream.use(raw([...chunks.map(frame), DONE]));
    await start();

    const text = await openStream(app.url, { ...HELLO, stream_options: { include_usage: true } }).ended;

    expect(text).toBe([...chunks.map(frame), DONE].join(''));
  });

  it('stops the upstream request and frees the lane slot when the client leaves mid-stream', async () => {
    const chunks = openaiChunks(['Hel', 'lo'], { usage: null });
    const gate = deferred<void>();
    upstream.use(raw([frame(chunks[0]!) + frame(chunks[1]!), gate, frame(chunks[2]!), DONE]));
    await start();

    const abort = new AbortController();
    const response = await request(`${app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...asAcme },
      body: JSON.stringify({ stream: true, ...HELLO }),
      signal: abort.signal,
    });
    response.body.setEncoding('utf8');
    let text = '';
    for await (const piece of response.body) {
      text += piece as string;
      if (text.includes('"Hel"')) break;
    }
    expect(text).toBe(frame(chunks[0]!) + frame(chunks[1]!));

    await eventually(() => expect(upstream.abandoned).toBe(1));
    await eventually(async () => expect((await getLanes(app.url)).llm.active).toBe(0));
    gate.resolve();
  });

  describe('in virtual time', () => {
    let clock: FakeClock;

    beforeEach(() => {
      clock = new FakeClock();
    });

    it('answers an ordinary timeout error when nothing with content comes within firstByteTimeoutMs', async () => {
      const chunks = openaiChunks(['Hel'], { usage: null });
      const gate = deferred<void>();
      upstream.use(raw([frame(chunks[0]!), gate, frame(chunks[1]!), DONE]));
      await start({ firstByteTimeoutMs: 3_000 }, clock);

      const stream = openStream(app.url, HELLO);
      await eventually(() => expect(upstream.inFlight).toBe(1));
      await clock.advanceAsync(2_999);
      expect(stream.text()).toBe('');
      await clock.advanceAsync(1);
      const text = await stream.ended;

      expect(stream.status()).toBe(504);
      expect(JSON.parse(text)).toMatchObject({ error: { kind: 'timeout' } });
      await eventually(() => expect(upstream.abandoned).toBe(1));
      gate.resolve();
    });

    it('ends with a timeout error event when the upstream goes silent for idleTimeoutMs after the commit', async () => {
      const chunks = openaiChunks(['Hel', 'lo'], { usage: null });
      const gate = deferred<void>();
      upstream.use(raw([frame(chunks[0]!) + frame(chunks[1]!), gate, frame(chunks[2]!), DONE]));
      await start({ idleTimeoutMs: 2_000 }, clock);

      const stream = openStream(app.url, HELLO);
      await eventually(() => expect(stream.text()).toBe(frame(chunks[0]!) + frame(chunks[1]!)));
      await clock.advanceAsync(1_999);
      expect(stream.text()).toBe(frame(chunks[0]!) + frame(chunks[1]!));
      await clock.advanceAsync(1);
      const text = await stream.ended;

      const events = sseData(text);
      expect(events).toHaveLength(3);
      expect(JSON.parse(events[2]!)).toMatchObject({ error: { kind: 'timeout' } });
      await eventually(() => expect(upstream.abandoned).toBe(1));
      gate.resolve();
    });
  });
});
