import type { ServerResponse } from 'node:http';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { testTenant } from '../support/tenants';
import { closeAll, connectMcp, type McpConnection } from './mcp-client';
import { type McpRequestSeen, UpstreamMcpServer } from './upstream-mcp-server';

const ACME = testTenant('acme');

/** Answers every `tools/call` with `answer`; lets the rest (initialize, notifications) through. */
function onCalls(upstream: UpstreamMcpServer, answer: (seen: McpRequestSeen, response: ServerResponse) => void): void {
  upstream.intercept = (seen, response) => {
    if (seen.rpc !== 'tools/call') return false;
    answer(seen, response);
    return true;
  };
}

describe('kind: mcp tools when the upstream fails', () => {
  let clock: FakeClock;
  let upstream: UpstreamMcpServer;
  let app: TestApp | undefined;
  const connections: McpConnection[] = [];

  /** The app with the whole server imported as `up.<name>`, one attempt per call unless `tool` says more. */
  async function start(tool: Record<string, unknown> = {}, document: Record<string, unknown> = {}): Promise<TestApp> {
    upstream = await UpstreamMcpServer.start();
    clock = new FakeClock();
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey] },
        lanes: { main: { concurrency: 4, queueCapacity: 4 } },
        tools: {
          up: {
            lane: 'main',
            kind: 'mcp',
            url: upstream.url,
            tools: '*',
            timeoutMs: 5_000,
            retry: { maxAttempts: 1 },
            ...tool,
          },
        },
        ...document,
      },
      { clock },
    );
    return app;
  }

  afterEach(async () => {
    // Upstream first: it ends what a failed test left hanging on it. The app before its clients (see upstream-tools).
    await upstream.close();
    await closeOnFakeClock(app, clock);
    app = undefined;
    await closeAll(connections);
  });

  it('answers an upstream 500 as transient, and opens the breaker after enough of them', async () => {
    await start({ breaker: { volumeThreshold: 2, errorThresholdPercentage: 50 } });
    onCalls(upstream, (_seen, response) => response.writeHead(500).end('internal trouble'));

    const first = await invoke(app!.url, 'up.add', { a: 1, b: 2 }, ACME.headers);
    const second = await invoke(app!.url, 'up.add', { a: 1, b: 2 }, ACME.headers);
    const refused = await invoke(app!.url, 'up.add', { a: 1, b: 2 }, ACME.headers);

    for (const failed of [first, second]) {
      expect(failed.status).toBe(502);
      expect(failed.body.error).toMatchObject({
        kind: 'transient',
        message: "upstream of tool 'up.add' answered HTTP 500",
      });
    }
    expect(refused.status).toBe(503);
    expect(refused.body.error.kind).toBe('circuit_open');
    expect(upstream.calls).toHaveLength(2);
    const circuits = await send('GET', `${app!.url}/v1/circuits`, { headers: ACME.headers });
    expect(circuits.body.circuits['up.add'].state).toBe('open');
  });

  it('retries an upstream 500 on the same session, and answers the retry’s result', async () => {
    await start({ retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 10 } });
    let refused = 0;
    upstream.intercept = (seen, response) => {
      if (seen.rpc !== 'tools/call' || refused > 0) return false;
      refused++;
      response.writeHead(503).end();
      return true;
    };

    const answering = invoke(app!.url, 'up.add', { a: 2, b: 2 }, ACME.headers);
    await eventually(() => expect(upstream.calls).toHaveLength(1));
    await eventually(async () => {
      await clock.advanceAsync(10);
      expect(upstream.calls).toHaveLength(2);
    });
    const answer = await answering;

    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ result: { sum: 4 }, attempts: 2 });
    expect(new Set(upstream.calls.map((call) => call.sessionId)).size).toBe(1);
  });

  it('answers a connection cut before the result as transient, at once', async () => {
    await start();
    onCalls(upstream, (_seen, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(': starting\n\n');
      setImmediate(() => response.socket?.destroy());
    });

    const answer = await invoke(app!.url, 'up.add', { a: 1, b: 2 }, ACME.headers);

    expect(answer.status).toBe(502);
    expect(answer.body.error).toMatchObject({
      kind: 'transient',
      message: "upstream of tool 'up.add' ended its answer before the result",
    });
  });

  it('answers a JSON-RPC error of the upstream by its code: internal error transient, invalid params schema', async () => {
    await start();
    let code = -32603;
    onCalls(upstream, (seen, response) => {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: seen.id, error: { code, message: 'no good' } }));
    });

    const internal = await invoke(app!.url, 'up.echo', { text: 'x' }, ACME.headers);
    code = -32602;
    const invalid = await invoke(app!.url, 'up.echo', { text: 'x' }, ACME.headers);

    expect(internal.body.error).toMatchObject({
      kind: 'transient',
      message: "upstream of tool 'up.echo' answered JSON-RPC error -32603",
    });
    expect(invalid.body.error).toMatchObject({ kind: 'schema', message: expect.stringContaining('no good') });
  });

  it('times out a hanging upstream on the clock, aborts its request and tells it the call is cancelled', async () => {
    await start();
    onCalls(upstream, () => undefined);

    const answering = invoke(app!.url, 'up.add', { a: 1, b: 2 }, ACME.headers);
    await eventually(() => expect(upstream.calls).toHaveLength(1));
    await clock.advanceAsync(4_999);
    expect(upstream.abandoned).toBe(0);
    await clock.advanceAsync(1);
    const answer = await answering;

    expect(answer.status).toBe(504);
    expect(answer.body.error).toMatchObject({ kind: 'timeout', attempts: 1 });
    await eventually(() => expect(upstream.abandoned).toBe(1));
    await eventually(() =>
      expect(upstream.seen.find((request) => request.rpc === 'notifications/cancelled')?.params).toMatchObject({
        requestId: upstream.calls[0].id,
      }),
    );
  });

  it('aborts the upstream request when the REST caller leaves: the upstream tool sees the cancellation', async () => {
    await start();
    const caller = new AbortController();

    const leaving = invoke(app!.url, 'up.slow', {}, ACME.headers, caller.signal).catch(() => 'left');
    await eventually(() => expect(upstream.gates).toHaveLength(1));
    caller.abort();

    expect(await leaving).toBe('left');
    await eventually(() => expect(upstream.cancelled).toBe(1));
    await eventually(() => expect(upstream.abandoned).toBe(1));
  });

  it('aborts the upstream request when the MCP caller cancels its tools/call', async () => {
    await start();
    const connection = await connectMcp(app!.url, ACME.headers);
    connections.push(connection);
    const caller = new AbortController();

    const cancelled = connection.client
      .callTool({ name: 'up.slow', arguments: {} }, undefined, { signal: caller.signal })
      .catch((error: Error) => error);
    await eventually(() => expect(upstream.gates).toHaveLength(1));
    caller.abort('the agent moved on');

    expect(await cancelled).toBeInstanceOf(Error);
    await eventually(() => expect(upstream.cancelled).toBe(1));
    await eventually(() => expect(upstream.abandoned).toBe(1));
  });

  it('refuses an answer larger than maxResponseBytes as transient', async () => {
    await start({ maxResponseBytes: 500 });

    const small = await invoke(app!.url, 'up.echo', { text: 'short' }, ACME.headers);
    const large = await invoke(app!.url, 'up.echo', { text: 'x'.repeat(2_000) }, ACME.headers);

    expect(small.status).toBe(200);
    expect(large.status).toBe(502);
    expect(large.body.error).toMatchObject({
      kind: 'transient',
      message: "upstream of tool 'up.echo' answered more than 500 bytes",
    });
  });
});

describe('kind: mcp tools and the egress rules', () => {
  let clock: FakeClock;
  let upstream: UpstreamMcpServer;
  let app: TestApp | undefined;

  afterEach(async () => {
    await upstream.close();
    await closeOnFakeClock(app, clock);
    app = undefined;
  });

  it('refuses a server the egress rules do not allow: egress_denied, nothing sent, not retried', async () => {
    upstream = await UpstreamMcpServer.start();
    clock = new FakeClock();
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey] },
        lanes: { main: { concurrency: 4, queueCapacity: 4 } },
        containment: { egress: { allowHosts: ['mcp.example.com'], allowPrivateCidrs: [] } },
        tools: { add: { lane: 'main', kind: 'mcp', url: upstream.url, tool: 'add' } },
      },
      { clock },
    );

    const answer = await invoke(app.url, 'add', { a: 1, b: 2 }, ACME.headers);

    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({ kind: 'egress_denied', attempts: 1 });
    expect(upstream.seen).toHaveLength(0);
  });
});
