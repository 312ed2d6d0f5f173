import type { ServerResponse } from 'node:http';
import { LaneRegistry } from '../../src/bulkhead';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope, expectNothingLeaked } from '../support/envelope';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { hang, json, Upstream, type UpstreamHandler } from '../support/upstream';

/** What an upstream says in its error bodies; it must never reach a client. */
const SECRET = 'SECRET-UPSTREAM-BODY-7f3a';

function answer(status: number, body = '', headers: Record<string, string> = {}): UpstreamHandler {
  return (_request, response: ServerResponse) => {
    response.writeHead(status, headers).end(body);
  };
}

describe('http tools against a real upstream', () => {
  let clock: FakeClock;
  let upstreams: Upstream[] = [];
  let current: TestApp | undefined;

  async function upstream(handler?: UpstreamHandler): Promise<Upstream> {
    const started = await Upstream.start(handler);
    upstreams.push(started);
    return started;
  }

  /**
   * The app with one http tool `fetch` on `url`; the tool's config can be extended. One
   * attempt: these tests read how a single answer maps (retries: retries.e2e-spec.ts).
   */
  async function service(url: string, tool: Record<string, unknown> = {}): Promise<TestApp> {
    clock = new FakeClock();
    current = await createTestApp(
      {
        lanes: { main: { concurrency: 2, queueCapacity: 2 } },
        tools: { fetch: { lane: 'main', kind: 'http', url, timeoutMs: 5000, retry: { maxAttempts: 1 }, ...tool } },
      },
      { clock },
    );
    return current;
  }

  async function events(app: TestApp): Promise<Array<{ callId: string; status: string }>> {
    return (await send('GET', `${app.url}/v1/events`)).body.events;
  }

  afterEach(async () => {
    // Upstreams first: closing one ends any request a failed test left hanging on it.
    for (const started of upstreams) await started.close();
    upstreams = [];
    await closeOnFakeClock(current, clock);
    current = undefined;
  });

  describe('the request', () => {
    it('sends the arguments as a JSON POST body with content-type application/json and x-call-id', async () => {
      const up = await upstream();
      const app = await service(up.url('/lookup'));

      const response = await invoke(app.url, 'fetch', { id: 7, tags: ['a', 'b'] }, { 'x-call-id': 'http-1' });

      expect(response.status).toBe(200);
      expect(up.requests).toHaveLength(1);
      const [received] = up.requests;
      expect(received).toMatchObject({ method: 'POST', path: '/lookup' });
      expect(received.headers['content-type']).toBe('application/json');
      expect(received.headers['x-call-id']).toBe('http-1');
      expect(JSON.parse(received.body)).toEqual({ id: 7, tags: ['a', 'b'] });
    });

    it('sends the method of the tool config', async () => {
      const up = await upstream();
      const app = await service(up.url('/items'), { method: 'PUT' });

      await invoke(app.url, 'fetch', { id: 1 });

      expect(up.requests.map((request) => request.method)).toEqual(['PUT']);
    });

    it('sends the headers of the tool config to the upstream', async () => {
      const up = await upstream();
      const app = await service(up.url('/'), { headers: { 'x-api-key': 'key-123', 'x-region': 'eu' } });

      await invoke(app.url, 'fetch', {});

      expect(up.requests[0].headers).toMatchObject({ 'x-api-key': 'key-123', 'x-region': 'eu' });
    });
  });

  describe('2xx answers', () => {
    it('answers the parsed JSON of a JSON answer', async () => {
      const up = await upstream(json(200, { preview: 'ok', pages: [1, 2] }));
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', {}, { 'x-call-id': 'json-1' });

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        callId: 'json-1',
        toolId: 'fetch',
        result: { preview: 'ok', pages: [1, 2] },
        attempts: 1,
      });
    });

    it('parses a +json content type with parameters as JSON', async () => {
      const up = await upstream(
        answer(201, '{"id":9}', { 'content-type': 'application/vnd.acme+json; charset=utf-8' }),
      );
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', {});

      expect(response.body.result).toEqual({ id: 9 });
    });

    it('answers the text of a text/plain answer as a string', async () => {
      const up = await upstream(answer(200, '{"not":"parsed"}', { 'content-type': 'text/plain' }));
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', {});

      expect(response.status).toBe(200);
      expect(response.body.result).toBe('{"not":"parsed"}');
    });

    it.each([
      ['an empty 200', 200, { 'content-type': 'application/json' }],
      ['a 204', 204, {}],
    ])('answers null for %s', async (_label, status, headers) => {
      const up = await upstream(answer(status, '', headers));
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', {});

      expect(response.status).toBe(200);
      expect(response.body).toHaveProperty('result', null);
    });
  });

  describe('upstream errors', () => {
    it.each([500, 502, 503])('answers 502 transient for a %i without its body', async (status) => {
      const up = await upstream(answer(status, SECRET, { 'content-type': 'text/plain' }));
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', { q: 1 }, { 'x-call-id': `up-${status}` });

      const error = expectEnvelope(response, 502, 'transient');
      expect(error).toEqual({
        kind: 'transient',
        message: `upstream of tool 'fetch' answered HTTP ${status}`,
        attempts: 1,
        jsonrpcCode: -32011,
      });
      expectNothingLeaked(response, SECRET);
      expect((await events(app)).at(-1)).toMatchObject({ callId: `up-${status}`, status: 'transient' });
    });

    it('answers a 429 with Retry-After in seconds as transient with retryAfterMs', async () => {
      const up = await upstream(answer(429, SECRET, { 'retry-after': '7' }));
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', {});

      const error = expectEnvelope(response, 502, 'transient');
      expect(error.retryAfterMs).toBe(7000);
      expect(response.headers['retry-after']).toBe('7');
      expectNothingLeaked(response, SECRET);
    });

    it('reads a Retry-After HTTP date against the injected clock', async () => {
      const up = await upstream((_request, response) => {
        const at = new Date(clock.wallNow() + 30_000).toUTCString();
        response.writeHead(429, { 'retry-after': at }).end();
      });
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', {});

      expect(expectEnvelope(response, 502, 'transient').retryAfterMs).toBe(30_000);
      expect(response.headers['retry-after']).toBe('30');
    });

    it('answers a 408 as transient', async () => {
      const up = await upstream(answer(408, SECRET));
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', {});

      expect(expectEnvelope(response, 502, 'transient').attempts).toBe(1);
      expectNothingLeaked(response, SECRET);
    });

    it('answers a 404 as 404 not_found', async () => {
      const up = await upstream(answer(404, SECRET));
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', {});

      const error = expectEnvelope(response, 404, 'not_found');
      expect(error).toMatchObject({ message: "upstream of tool 'fetch' answered HTTP 404", attempts: 1 });
      expectNothingLeaked(response, SECRET);
    });

    it.each([400, 422])('answers a %i as 400 schema', async (status) => {
      const up = await upstream(answer(status, SECRET, { 'content-type': 'application/json' }));
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', {});

      const error = expectEnvelope(response, 400, 'schema');
      expect(error).toMatchObject({ jsonrpcCode: -32602, attempts: 1 });
      expect(error.message).toContain(`HTTP ${status}`);
      expectNothingLeaked(response, SECRET);
    });

    it('does not follow a redirect: a 302 is transient and its Location receives nothing', async () => {
      const elsewhere = await upstream();
      const up = await upstream(answer(302, SECRET, { location: elsewhere.url('/stolen') }));
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', { card: '4111' });

      expectEnvelope(response, 502, 'transient');
      expectNothingLeaked(response, SECRET, 'stolen');
      expect(elsewhere.requests).toHaveLength(0);
      expect(elsewhere.connections).toBe(0);
    });
  });

  describe('network failures', () => {
    it('answers a refused connection as transient with only its error code', async () => {
      const gone = await Upstream.start();
      const url = gone.url('/');
      await gone.close();
      const app = await service(url);

      const response = await invoke(app.url, 'fetch', {});

      const error = expectEnvelope(response, 502, 'transient');
      expect(error.message).toBe("upstream of tool 'fetch' could not be reached (ECONNREFUSED)");
      expect(error.attempts).toBe(1);
    });

    it('answers an upstream that destroys the socket before answering as transient', async () => {
      const up = await upstream((_request, response) => void response.socket?.destroy());
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', {});

      expectEnvelope(response, 502, 'transient');
      expect(up.requests).toHaveLength(1);
    });

    it('answers an upstream that destroys the socket in the middle of its body as transient', async () => {
      const up = await upstream((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        response.write(`{"partial":"${SECRET}`, () => response.socket?.destroy());
      });
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', {});

      expectEnvelope(response, 502, 'transient');
      expectNothingLeaked(response, SECRET);
    });
  });

  describe('limits and cancellation', () => {
    it('answers 504 timeout at the tool timeoutMs and closes the connection to the hung upstream', async () => {
      const up = await upstream(hang);
      const app = await service(up.url('/'), { timeoutMs: 1000 });

      const call = invoke(app.url, 'fetch', {}, { 'x-call-id': 'hung-1' });
      await eventually(() => expect(up.requests).toHaveLength(1));
      clock.advance(999);
      expect(clock.pendingTimers).toBe(1);
      clock.advance(1);
      const response = await call;

      const error = expectEnvelope(response, 504, 'timeout');
      expect(error).toMatchObject({ jsonrpcCode: -32010, attempts: 1 });
      // The abort reached the socket: the upstream sees its request given up.
      await eventually(() => expect(up.abandoned).toBe(1));
      expect((await events(app)).at(-1)).toMatchObject({ callId: 'hung-1', status: 'timeout' });
    });

    it('answers 502 transient for an answer larger than maxResponseBytes', async () => {
      const up = await upstream(answer(200, '{"x":"0123456789"}', { 'content-type': 'application/json' }));
      const app = await service(up.url('/'), { maxResponseBytes: 17 });

      const response = await invoke(app.url, 'fetch', {});

      const error = expectEnvelope(response, 502, 'transient');
      expect(error.message).toContain('17 bytes');
      expectNothingLeaked(response, '0123456789');
    });

    it('accepts an answer of exactly maxResponseBytes', async () => {
      const up = await upstream(answer(200, '{"x":"0123456789"}', { 'content-type': 'application/json' }));
      const app = await service(up.url('/'), { maxResponseBytes: 18 });

      const response = await invoke(app.url, 'fetch', {});

      expect(response.status).toBe(200);
      expect(response.body.result).toEqual({ x: '0123456789' });
    });

    it('answers malformed JSON with a JSON content type as transient without echoing it', async () => {
      const up = await upstream(answer(200, `{"token":"${SECRET}`, { 'content-type': 'application/json' }));
      const app = await service(up.url('/'));

      const response = await invoke(app.url, 'fetch', {});

      const error = expectEnvelope(response, 502, 'transient');
      expect(error.message).toBe("upstream of tool 'fetch' answered malformed JSON");
      expectNothingLeaked(response, SECRET);
    });

    it('abandons the upstream request when the client disconnects and records finished_after_caller_cancel', async () => {
      const up = await upstream(hang);
      const app = await service(up.url('/'), { timeoutMs: 60_000 });
      const client = new AbortController();

      const call = invoke(app.url, 'fetch', {}, { 'x-call-id': 'gone-1' }, client.signal);
      await eventually(() => expect(up.requests).toHaveLength(1));
      client.abort();
      await expect(call).rejects.toThrow();

      await eventually(() => expect(up.abandoned).toBe(1));
      await eventually(async () =>
        expect(await events(app)).toContainEqual(
          expect.objectContaining({ callId: 'gone-1', status: 'finished_after_caller_cancel' }),
        ),
      );
      expect(app.app.get(LaneRegistry).get('main')!.snapshot().active).toBe(0);
    });
  });
});
