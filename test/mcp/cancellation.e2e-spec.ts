import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { send } from '../support/http-client';
import { getEvents, getLanes } from '../support/service-reads';
import { hang, json, Upstream } from '../support/upstream';
import { closeAll, connectMcp, type McpConnection } from './mcp-client';

/** Lanes of one slot; `render` lets two calls wait (for two minutes), `fetch` one. */
function config(upstreamUrl: string, mcp: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    lanes: {
      render: { concurrency: 1, queueCapacity: 2, queueTtlMs: 120_000 },
      fetch: { concurrency: 1, queueCapacity: 1 },
    },
    tools: {
      render: { lane: 'render', kind: 'builtin', builtin: 'delay' },
      fetch: { lane: 'fetch', kind: 'http', url: upstreamUrl, retry: { maxAttempts: 1 } },
    },
    mcp,
  };
}

describe.each(PLATFORMS.flatMap((platform) => [['sse', platform] as const, ['json', platform] as const]))(
  'MCP cancellation (%s answers), on %s',
  (responses, platform) => {
    let clock: FakeClock;
    let app: TestApp | undefined;
    let upstream: Upstream;
    const connections: McpConnection[] = [];

    async function connect(): Promise<McpConnection> {
      const connection = await connectMcp(app!.url);
      connections.push(connection);
      return connection;
    }

    async function expectLane(name: string, expected: { active: number; waiting: number }): Promise<void> {
      await eventually(async () => expect((await getLanes(app!.url))[name]).toMatchObject(expected));
    }

    beforeEach(async () => {
      clock = new FakeClock();
      upstream = await Upstream.start(hang);
      app = await createTestApp(config(upstream.url('/tool'), { responses }), { platform, clock });
    });

    afterEach(async () => {
      await closeAll(connections);
      await closeOnFakeClock(app, clock);
      await upstream.close();
      app = undefined;
    });

    it('takes a queued call out of its lane’s queue at once, and its tool never runs', async () => {
      const { client } = await connect();
      const running = client.callTool({ name: 'render', arguments: { ms: 5_000 } });
      await expectLane('render', { active: 1, waiting: 0 });
      const cancel = new AbortController();
      const queued = client.callTool({ name: 'render', arguments: { ms: 1 } }, undefined, { signal: cancel.signal });
      await expectLane('render', { active: 1, waiting: 1 });

      cancel.abort('the agent moved on');

      await expect(queued).rejects.toThrow();
      await expectLane('render', { active: 1, waiting: 0 });
      await eventually(async () =>
        expect((await getEvents(app!.url)).map((event) => event.status)).toEqual(['cancelled']),
      );
      await clock.advanceAsync(5_000);
      expect(await running).toMatchObject({ structuredContent: { result: { waitedMs: 5_000 } } });
      expect((await getEvents(app!.url)).map((event) => event.status)).toEqual(['cancelled', 'ok']);
    });

    it('signals a running call: its upstream request is aborted and its slot freed', async () => {
      const { client } = await connect();
      const cancel = new AbortController();
      const call = client.callTool({ name: 'fetch', arguments: { q: 1 } }, undefined, { signal: cancel.signal });
      await eventually(() => expect(upstream.inFlight).toBe(1));
      await expectLane('fetch', { active: 1, waiting: 0 });

      cancel.abort();

      await expect(call).rejects.toThrow();
      await eventually(() => expect(upstream.abandoned).toBe(1));
      await expectLane('fetch', { active: 0, waiting: 0 });
      await eventually(async () =>
        expect((await getEvents(app!.url)).map((event) => event.status)).toEqual(['finished_after_caller_cancel']),
      );
      // The session is free for the next call.
      upstream.use(json(200, { ok: true }));
      expect(await client.callTool({ name: 'fetch', arguments: {} })).toMatchObject({
        structuredContent: { result: { ok: true } },
      });
    });

    it('aborts the calls of a session its client ends (DELETE)', async () => {
      const connection = await connect();
      const running = connection.client.callTool({ name: 'fetch', arguments: {} }).catch((error: unknown) => error);
      await eventually(() => expect(upstream.inFlight).toBe(1));

      await connection.transport.terminateSession();

      await eventually(() => expect(upstream.abandoned).toBe(1));
      await expectLane('fetch', { active: 0, waiting: 0 });
      void running;
    });
  },
);

describe.each(PLATFORMS)('MCP progress while a call waits in its lane, on %s', (platform) => {
  let clock: FakeClock;
  let app: TestApp | undefined;
  const connections: McpConnection[] = [];

  afterEach(async () => {
    await closeAll(connections);
    await closeOnFakeClock(app, clock);
    app = undefined;
  });

  async function start(responses: 'sse' | 'json'): Promise<McpConnection> {
    clock = new FakeClock();
    app = await createTestApp(config('http://127.0.0.1:9/unused', { responses, progressIntervalMs: 1_000 }), {
      platform,
      clock,
    });
    const connection = await connectMcp(app.url);
    connections.push(connection);
    return connection;
  }

  it('reports the wait every progressIntervalMs of the clock until the call takes its slot', async () => {
    const { client } = await start('sse');
    const running = client.callTool({ name: 'render', arguments: { ms: 3_000 } });
    await eventually(async () => expect((await getLanes(app!.url)).render).toMatchObject({ active: 1 }));
    const progress: Progress[] = [];

    const queued = client.callTool({ name: 'render', arguments: { ms: 10 } }, undefined, {
      onprogress: (update) => progress.push(update),
    });

    await eventually(() => expect(progress).toHaveLength(1));
    expect(progress[0]).toEqual({
      progress: 0,
      total: 120_000,
      message: "waiting for a slot in lane 'render': 1 running, 1 waiting",
    });
    await clock.advanceAsync(1_000);
    await eventually(() => expect(progress).toHaveLength(2));
    await clock.advanceAsync(1_000);
    await eventually(() => expect(progress).toHaveLength(3));
    expect(progress.map((update) => update.progress)).toEqual([0, 1_000, 2_000]);

    await clock.advanceAsync(1_000); // the running call ends; the queued one takes its slot
    await eventually(async () => expect((await getLanes(app!.url)).render).toMatchObject({ active: 1, waiting: 0 }));
    const reported = progress.length;
    await clock.advanceAsync(10);
    expect(await queued).toMatchObject({ structuredContent: { result: { waitedMs: 10 } } });
    await running;
    await clock.advanceAsync(5_000);
    expect(progress).toHaveLength(reported);
    expect(reported).toBeLessThanOrEqual(4);
  });

  it('sends none to a client that asked for none, and none in a JSON answer', async () => {
    const { client } = await start('json');
    const running = client.callTool({ name: 'render', arguments: { ms: 1_000 } });
    await eventually(async () => expect((await getLanes(app!.url)).render).toMatchObject({ active: 1 }));
    const progress: Progress[] = [];

    const queued = client.callTool({ name: 'render', arguments: { ms: 1 } }, undefined, {
      onprogress: (update) => progress.push(update),
    });
    await eventually(async () => expect((await getLanes(app!.url)).render).toMatchObject({ waiting: 1 }));
    await clock.advanceAsync(1_000);
    await running;
    await clock.advanceAsync(1);

    expect(await queued).toMatchObject({ structuredContent: { result: { waitedMs: 1 } } });
    expect(progress).toEqual([]);
  });
});

describe.each(PLATFORMS)('MCP answers, on %s', (platform) => {
  let app: TestApp | undefined;

  afterEach(() => app?.close());

  it.each([
    ['sse', 'text/event-stream'],
    ['json', 'application/json'],
  ])('answers a POST of mcp.responses %s as %s', async (responses, type) => {
    app = await createTestApp(config('http://127.0.0.1:9/unused', { responses }), { platform });

    const answer = await send('POST', `${app.url}/mcp`, {
      json: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      },
      headers: { accept: 'application/json, text/event-stream' },
    });

    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(new RegExp(`^${type}`));
    expect(answer.headers['mcp-session-id']).toMatch(/^[0-9a-f-]{36}$/);
    const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    expect(text).toContain('"serverInfo":{"name":"bulkhead"');
  });
});
