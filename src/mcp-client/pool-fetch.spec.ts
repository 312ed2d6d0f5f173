import { LazyAbortController, SystemClock } from '../common';
import { type AbortableRequestOptions, HttpPool, type PoolName } from '../containment';
import { EgressPolicy } from '../containment/egress';
import { eventually } from '../../test/support/eventually';
import { hang, json, Upstream, type UpstreamHandler } from '../../test/support/upstream';
import type { RoutedCall } from './call-routing.transport';
import { poolFetch } from './pool-fetch';
import { UpstreamAnswerEnded, UpstreamAnswerTooLarge, type UpstreamCall } from './upstream-call';

function pool(allowHosts = ['*']): HttpPool {
  return new HttpPool(
    { name: 'normal' as PoolName, maxConcurrency: 4, timeoutMs: 10_000, pooledConnectionLifetimeMs: 60_000 },
    new EgressPolicy({ allowHosts, allowPrivateCidrs: ['127.0.0.0/8'] }),
    new SystemClock(),
  );
}

describe('poolFetch: the SDK transport’s fetch through a Bulkhead pool', () => {
  const started: Upstream[] = [];
  const pools: HttpPool[] = [];

  async function upstream(handler?: UpstreamHandler): Promise<Upstream> {
    const server = await Upstream.start(handler);
    started.push(server);
    return server;
  }

  function fetchOf(
    options: {
      listen?: boolean;
      allowHosts?: string[];
      limit?: number;
      routed?: (body?: string) => RoutedCall | undefined;
      delivered?: unknown[];
      through?: HttpPool;
    } = {},
  ) {
    const through = options.through ?? pool(options.allowHosts);
    if (!pools.includes(through)) pools.push(through);
    return poolFetch({
      pool: through,
      listen: options.listen ?? false,
      maxResponseBytes: options.limit ?? 1024,
      callOf: options.routed ?? (() => undefined),
      deliver: (message) => options.delivered?.push(message),
    });
  }

  afterEach(async () => {
    await Promise.all(started.splice(0).map((server) => server.close()));
    await Promise.all(pools.splice(0).map((closing) => closing.close()));
  });

  it('sends the request through the pool and answers a web Response of what came back', async () => {
    const server = await upstream(json(200, { jsonrpc: '2.0', id: 1, result: {} }, { 'mcp-session-id': 's-1' }));
    const fetch = fetchOf();

    const response = await fetch(server.url('/mcp'), {
      method: 'POST',
      headers: new Headers({ 'content-type': 'application/json', authorization: 'Bearer t' }),
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      signal: new AbortController().signal,
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBe('s-1');
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      path: '/mcp',
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(server.requests[0].headers.authorization).toBe('Bearer t');
  });

  it('answers the listening GET with 405 itself, unless the session listens', async () => {
    const server = await upstream(json(200, {}));

    const quiet = await fetchOf()(server.url('/mcp'), { method: 'GET' });
    const listening = await fetchOf({ listen: true })(server.url('/mcp'), { method: 'GET' });
    await listening.text();

    expect(quiet.status).toBe(405);
    expect(listening.status).toBe(200);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses a URL the egress rules do not allow, before any connection', async () => {
    const server = await upstream();

    await expect(
      fetchOf({ allowHosts: ['mcp.example.com'] })(server.url('/mcp'), { method: 'POST', body: '{}' }),
    ).rejects.toMatchObject({
      kind: 'egress_denied',
    });
    expect(server.connections).toBe(0);
  });

  it('fails a body larger than the session’s limit', async () => {
    const server = await upstream(json(200, { text: 'x'.repeat(2_000) }));

    const response = await fetchOf({ limit: 1_000 })(server.url('/mcp'), { method: 'POST', body: '{}' });

    await expect(response.text()).rejects.toBeInstanceOf(UpstreamAnswerTooLarge);
  });

  it('stops the request when the session’s signal fires', async () => {
    const server = await upstream(hang);
    const session = new AbortController();

    const answering = fetchOf()(server.url('/mcp'), { method: 'POST', body: '{}', signal: session.signal });
    await eventually(() => expect(server.requests).toHaveLength(1));
    session.abort(new Error('session closed'));

    await expect(answering).rejects.toThrow();
    await eventually(() => expect(server.abandoned).toBe(1));
  });

  describe('for a call', () => {
    function call(
      through: HttpPool,
      overrides: Partial<UpstreamCall> = {},
    ): UpstreamCall & { sent: AbortableRequestOptions[] } {
      const abort = new LazyAbortController();
      const sent: AbortableRequestOptions[] = [];
      return {
        callId: 'call-9',
        signal: abort.signal,
        timeoutMs: 7_000,
        maxResponseBytes: 1_000_000,
        stream: (url, options) => {
          sent.push(options);
          return through.streamAbortable(url, options, abort);
        },
        sent,
        ...overrides,
      };
    }

    const REQUEST = '{"method":"tools/call","params":{"name":"add"},"jsonrpc":"2.0","id":7}';

    /** Answers with these events as a stream, then ends it. */
    function events(...data: string[]): UpstreamHandler {
      return (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const item of data) response.write(`event: message\ndata: ${item}\n\n`);
        response.end();
      };
    }

    it('goes through the call’s own request, with its call id and timeout', async () => {
      const server = await upstream(json(200, { jsonrpc: '2.0', id: 7, result: {} }));
      const bodies: Array<string | undefined> = [];
      const through = pool();
      const attempt = call(through);
      const fetch = fetchOf({
        through,
        routed: (body) => {
          bodies.push(body);
          return { call: attempt, id: 7 };
        },
      });

      const response = await fetch(server.url('/mcp'), { method: 'POST', body: REQUEST });

      expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
      expect(attempt.sent).toEqual([expect.objectContaining({ method: 'POST', timeoutMs: 7_000 })]);
      expect(server.requests[0].headers['x-call-id']).toBe('call-9');
      expect(bodies).toEqual([REQUEST]);
    });

    it('asks for no call for a GET or a DELETE', async () => {
      const server = await upstream(json(200, {}));
      const asked: unknown[] = [];
      const fetch = fetchOf({
        routed: (body) => {
          asked.push(body);
          return undefined;
        },
      });

      await (await fetch(server.url('/mcp'), { method: 'DELETE' })).text();

      expect(asked).toEqual([]);
    });

    it('reads an event-stream answer itself: the result as JSON, what came before it to the client', async () => {
      const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}';
      const result = '{"jsonrpc":"2.0","id":7,"result":{"content":[]}}';
      const server = await upstream(events(progress, result));
      const delivered: unknown[] = [];
      const through = pool();
      const attempt = call(through);
      const fetch = fetchOf({ through, routed: () => ({ call: attempt, id: 7 }), delivered });

      const response = await fetch(server.url('/mcp'), { method: 'POST', body: REQUEST });

      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await response.text()).toBe(result);
      expect(delivered).toEqual([JSON.parse(progress)]);
    });

    it('fails with UpstreamAnswerEnded when the stream ends before the result', async () => {
      const server = await upstream(events('{"jsonrpc":"2.0","method":"notifications/message","params":{}}'));
      const through = pool();
      const attempt = call(through);
      const fetch = fetchOf({ through, routed: () => ({ call: attempt, id: 7 }) });

      await expect(fetch(server.url('/mcp'), { method: 'POST', body: REQUEST })).rejects.toBeInstanceOf(
        UpstreamAnswerEnded,
      );
    });

    it('bounds the answer by the call’s maxResponseBytes', async () => {
      const server = await upstream(events(`{"jsonrpc":"2.0","id":7,"result":{"text":"${'x'.repeat(500)}"}}`));
      const through = pool();
      const attempt = call(through, { maxResponseBytes: 100 });
      const fetch = fetchOf({ through, routed: () => ({ call: attempt, id: 7 }) });

      await expect(fetch(server.url('/mcp'), { method: 'POST', body: REQUEST })).rejects.toBeInstanceOf(
        UpstreamAnswerTooLarge,
      );
    });

    it('takes the session’s way once the attempt is over (its notifications/cancelled)', async () => {
      const server = await upstream(json(202, {}));
      const stopped = new AbortController();
      stopped.abort();
      const through = pool();
      const attempt = call(through, { signal: stopped.signal });
      const fetch = fetchOf({ through, routed: () => ({ call: attempt, id: 7 }) });

      const response = await fetch(server.url('/mcp'), { method: 'POST', body: '{}' });

      expect(response.status).toBe(202);
      expect(attempt.sent).toHaveLength(0);
      expect(server.requests[0].headers['x-call-id']).toBeUndefined();
    });
  });
});
