import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { closeAll, connectMcp, type McpConnection } from './mcp-client';
import { ADD_SCHEMA, UpstreamMcpServer } from './upstream-mcp-server';

const ACME = testTenant('acme');
const EVIL = testTenant('evil');

/** A `tools/call` result as the SDK client hands it over. */
interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, any>;
}

/** `add` and `fail` by name, and the whole server imported as `up.<name>`. */
function config(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    auth: { apiKeys: [ACME.apiKey, EVIL.apiKey], adminToken: ADMIN_TOKEN },
    lanes: { main: { concurrency: 4, queueCapacity: 4 } },
    tools: {
      add: { lane: 'main', kind: 'mcp', url, tool: 'add', ...extra },
      fail: { lane: 'main', kind: 'mcp', url, tool: 'fail', breaker: { volumeThreshold: 2 }, ...extra },
      up: { lane: 'main', kind: 'mcp', url, tools: '*', ...extra },
    },
  };
}

describe('kind: mcp tools: an upstream MCP server behind Bulkhead', () => {
  let clock: FakeClock;
  let upstream: UpstreamMcpServer;
  let app: TestApp | undefined;
  const connections: McpConnection[] = [];

  async function start(extra: Record<string, unknown> = {}): Promise<TestApp> {
    upstream = await UpstreamMcpServer.start();
    clock = new FakeClock();
    app = await createTestApp(config(upstream.url, extra), { clock });
    return app;
  }

  async function connect(headers: Record<string, string> = ACME.headers): Promise<McpConnection> {
    const connection = await connectMcp(app!.url, headers);
    connections.push(connection);
    return connection;
  }

  afterEach(async () => {
    // The app before its clients: closing a client first leaves Node's fetch a fresh socket to
    // the app, which the app's shutdown then waits out (its keep-alive).
    await closeOnFakeClock(app, clock);
    app = undefined;
    await closeAll(connections);
    await upstream.close();
  });

  describe('through the REST route', () => {
    it('answers the upstream tool’s structuredContent as the result', async () => {
      await start();

      const response = await invoke(app!.url, 'add', { a: 2, b: 3 }, ACME.headers);

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ toolId: 'add', pool: 'normal', result: { sum: 5 }, attempts: 1 });
      expect(upstream.calls.map((call) => call.params)).toEqual([{ name: 'add', arguments: { a: 2, b: 3 } }]);
    });

    it('answers the content blocks when the upstream tool has no structured content', async () => {
      await start();

      const response = await invoke(app!.url, 'up.echo', { text: 'hello' }, ACME.headers);

      expect(response.status).toBe(200);
      expect(response.body.result).toEqual([{ type: 'text', text: 'hello' }]);
    });

    it('checks the arguments against the schema the upstream listed, before anything is sent', async () => {
      await start();

      const response = await invoke(app!.url, 'add', { a: 2 }, ACME.headers);

      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({
        kind: 'schema',
        message: "arguments must have required property 'b'",
        attempts: 0,
      });
      expect(upstream.calls).toHaveLength(0);
    });

    it('answers an isError result as the upstream’s failure with its text: not retried, counted by the breaker', async () => {
      await start();

      const answers = [];
      for (let i = 0; i < 2; i++) answers.push(await invoke(app!.url, 'fail', {}, ACME.headers));

      for (const answer of answers) {
        expect(answer.status).toBe(502);
        expect(answer.body.error).toMatchObject({
          kind: 'transient',
          message: "the upstream tool of 'fail' answered an error: the upstream tool broke: disk full",
          attempts: 1,
        });
      }
      expect(upstream.calls).toHaveLength(2);
      const circuits = await send('GET', `${app!.url}/v1/circuits`, { headers: ACME.headers });
      expect(circuits.body.circuits.fail).toMatchObject({ state: 'open', failures: 2 });
    });

    it('sends the config’s headers on every request, the call id on the call and the scoped idempotency key in _meta', async () => {
      await start({ headers: { authorization: 'Bearer upstream-token' } });

      const response = await invoke(app!.url, 'add', { a: 1, b: 1 }, { ...ACME.headers, 'idempotency-key': 'job-7' });

      expect(response.status).toBe(200);
      expect(upstream.seen.length).toBeGreaterThan(2);
      for (const request of upstream.seen) expect(request.headers.authorization).toBe('Bearer upstream-token');
      const [call] = upstream.calls;
      expect(call.headers['x-call-id']).toBe(response.body.callId);
      const key = call.params?._meta?.['io.bulkhead/idempotency-key'];
      expect(key).toEqual(expect.any(String));
      expect(key).not.toContain('job-7');
    });

    it('opens the session again when the upstream no longer knows it (404), and sends the call once more', async () => {
      await start();
      await invoke(app!.url, 'add', { a: 1, b: 2 }, ACME.headers);
      const before = upstream.sessionsOpened.length;

      upstream.forgetSessions();
      const response = await invoke(app!.url, 'add', { a: 3, b: 4 }, ACME.headers);

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ result: { sum: 7 }, attempts: 1 });
      expect(upstream.sessionsOpened.length).toBe(before + 1);
      expect(upstream.calls.map((call) => call.sessionId)).toEqual([
        upstream.sessionsOpened[before - 1],
        upstream.sessionsOpened[before - 1],
        upstream.sessionsOpened[before],
      ]);
    });
  });

  describe('through Bulkhead’s /mcp (the SDK client)', () => {
    it('lists the upstream tools with their input schemas and descriptions', async () => {
      await start();
      const { client } = await connect();

      const { tools } = await client.listTools();

      expect(tools.map((tool) => tool.name).sort()).toEqual([
        'add',
        'fail',
        'up.add',
        'up.echo',
        'up.fail',
        'up.slow',
        'up.steps',
      ]);
      for (const name of ['add', 'up.add']) {
        expect(tools.find((tool) => tool.name === name)).toMatchObject({
          description: 'adds two numbers',
          inputSchema: ADD_SCHEMA,
          annotations: { idempotentHint: false },
        });
      }
    });

    it('shows and holds to the entry’s own inputSchema and description instead of the upstream’s', async () => {
      upstream = await UpstreamMcpServer.start();
      clock = new FakeClock();
      const small = { type: 'object', properties: { a: { type: 'integer', maximum: 9 }, b: { type: 'integer' } } };
      app = await createTestApp(
        {
          auth: { apiKeys: [ACME.apiKey] },
          lanes: { main: { concurrency: 4, queueCapacity: 4 } },
          tools: {
            add: { lane: 'main', kind: 'mcp', url: upstream.url, tool: 'add', inputSchema: small, description: 'sums' },
          },
        },
        { clock },
      );
      const { client } = await connect();

      const { tools } = await client.listTools();
      const refused = (await client.callTool({ name: 'add', arguments: { a: 10, b: 1 } })) as ToolResult;

      expect(tools).toEqual([expect.objectContaining({ name: 'add', description: 'sums', inputSchema: small })]);
      expect(refused.structuredContent).toMatchObject({
        error: { kind: 'schema', message: 'arguments.a must be <= 9' },
      });
      expect(upstream.calls).toHaveLength(0);
    });

    it('hands the upstream’s content blocks on, with the success body as structuredContent', async () => {
      await start();
      const { client } = await connect();

      const echoed = (await client.callTool({ name: 'up.echo', arguments: { text: 'hi there' } })) as ToolResult;
      const added = (await client.callTool({ name: 'add', arguments: { a: 20, b: 22 } })) as ToolResult;

      expect(echoed.isError).toBeFalsy();
      expect(echoed.content).toEqual([{ type: 'text', text: 'hi there' }]);
      expect(echoed.structuredContent).toMatchObject({ toolId: 'up.echo', pool: 'normal', attempts: 1 });
      expect(added.content).toEqual([{ type: 'text', text: '{"sum":42}' }]);
      expect(added.structuredContent).toMatchObject({ result: { sum: 42 } });
    });

    it('hands the upstream’s progress notifications on to the caller that asked for them', async () => {
      await start();
      const { client } = await connect();
      const seen: Array<{ progress: number; total?: number; message?: string }> = [];

      const answered = (await client.callTool({ name: 'up.steps', arguments: {} }, undefined, {
        onprogress: (update) => seen.push(update),
      })) as ToolResult;

      expect(answered.content).toEqual([{ type: 'text', text: 'steps done' }]);
      // Started at once (no wait to report): the upstream's own numbers, each rising.
      expect(seen).toEqual([
        { progress: 1, total: 3, message: 'step 1 of 3' },
        { progress: 2, total: 3, message: 'step 2 of 3' },
        { progress: 3, total: 3, message: 'step 3 of 3' },
      ]);
    });

    it('answers an upstream error result and a schema refusal as isError results', async () => {
      await start();
      const { client } = await connect();

      const failed = (await client.callTool({ name: 'up.fail', arguments: {} })) as ToolResult;
      const refused = (await client.callTool({ name: 'up.add', arguments: { a: 'one', b: 2 } })) as ToolResult;

      expect(failed).toMatchObject({
        isError: true,
        structuredContent: { error: { kind: 'transient', message: expect.stringContaining('disk full') } },
      });
      expect(refused).toMatchObject({
        isError: true,
        structuredContent: { error: { kind: 'schema', message: 'arguments.a must be number', attempts: 0 } },
      });
      expect(upstream.calls.map((call) => call.tool)).toEqual(['fail']);
    });

    it('follows notifications/tools/list_changed: the new schema is listed, checked, and announced', async () => {
      // Under the default `pinning: enforce` the changed echo is quarantined (test/mcp/tool-pinning.e2e-spec.ts);
      // `warn` serves it changed, which is what this test follows.
      await start({ pinning: 'warn' });
      const { client } = await connect();
      let announced = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        announced++;
      });
      // The client's listening stream is open once the server has one for the session.
      await eventually(() => expect(upstream.seen.some((request) => request.method === 'GET')).toBe(true));

      upstream.changeEcho();

      await eventually(async () => {
        const { tools } = await client.listTools();
        expect(tools.find((tool) => tool.name === 'up.echo')).toMatchObject({
          description: 'says the text back, shorter',
          inputSchema: { properties: { text: { type: 'string', maxLength: 3 } } },
        });
      });
      await eventually(() => expect(announced).toBeGreaterThan(0));
      const refused = await invoke(app!.url, 'up.echo', { text: 'too long' }, ACME.headers);
      expect(refused.body.error).toMatchObject({ kind: 'schema', attempts: 0 });
    });
  });

  describe('tenants', () => {
    it('holds one upstream session per pool: a contained tenant’s calls never ride a normal tenant’s', async () => {
      await start({ session: 'per-pool' });
      await send('PUT', `${app!.url}/v1/admin/containment/evil`, {
        json: { state: 'active', reason: 'test' },
        headers: AS_ADMIN,
      });
      const normal = await invoke(app!.url, 'add', { a: 1, b: 2 }, ACME.headers);
      const contained = await invoke(app!.url, 'add', { a: 3, b: 4 }, EVIL.headers);
      const normalAgain = await invoke(app!.url, 'add', { a: 5, b: 6 }, ACME.headers);
      const evilMcp = await connect(EVIL.headers);
      const viaMcp = (await evilMcp.client.callTool({
        name: 'add',
        arguments: { a: 7, b: 8 },
      })) as ToolResult;

      expect([normal, contained, normalAgain].map((answer) => answer.body.pool)).toEqual([
        'normal',
        'isolated',
        'normal',
      ]);
      expect(viaMcp.structuredContent).toMatchObject({ pool: 'isolated', result: { sum: 15 } });
      const [first, second, third, fourth] = upstream.calls;
      expect(first.sessionId).toBeDefined();
      expect(second.sessionId).toBeDefined();
      expect(second.sessionId).not.toBe(first.sessionId);
      expect(third.sessionId).toBe(first.sessionId);
      expect(fourth.sessionId).toBe(second.sessionId);
      // Two sessions in all (the normal one also listed the tools at start-up), on sockets of their own pools.
      expect(new Set(upstream.sessionsOpened).size).toBe(2);
      expect(second.remotePort).not.toBe(first.remotePort);
      expect(fourth.remotePort).not.toBe(third.remotePort);
    });

    it('keeps the listening stream on the normal pool’s session only', async () => {
      await start({ session: 'per-pool' });
      await invoke(app!.url, 'add', { a: 1, b: 2 }, ACME.headers);
      await invoke(app!.url, 'add', { a: 1, b: 2 });

      const sessionsCalled = new Set(upstream.calls.map((call) => call.sessionId));
      const listening = upstream.seen.filter((request) => request.method === 'GET').map((request) => request.sessionId);

      expect(sessionsCalled.size).toBe(2);
      expect(new Set(listening).size).toBe(1);
      expect(listening[0]).toBe(upstream.calls[0].sessionId);
    });

    it('keeps the listening stream on the session that lists, never on a tenant’s own', async () => {
      await start();
      await invoke(app!.url, 'add', { a: 1, b: 2 }, ACME.headers);
      await invoke(app!.url, 'add', { a: 1, b: 2 });

      const sessionsCalled = new Set(upstream.calls.map((call) => call.sessionId));
      const listing = upstream.seen.find((request) => request.rpc === 'tools/list')?.sessionId;
      const listening = upstream.seen.filter((request) => request.method === 'GET').map((request) => request.sessionId);

      expect(sessionsCalled.size).toBe(2);
      expect(sessionsCalled.has(listing)).toBe(false);
      expect(new Set(listening)).toEqual(new Set([listing]));
    });
  });

  it('ends every upstream session (DELETE) when the service shuts down', async () => {
    await start();
    await invoke(app!.url, 'add', { a: 1, b: 2 }, ACME.headers);
    await invoke(app!.url, 'add', { a: 1, b: 2 });

    // Nothing in flight: the drain ends at once; the clock is left alone, so the DELETEs get their time.
    await app!.close();
    app = undefined;

    const ended = upstream.seen.filter((request) => request.method === 'DELETE').map((request) => request.sessionId);
    expect(new Set(ended)).toEqual(new Set(upstream.sessionsOpened));
  });
});
