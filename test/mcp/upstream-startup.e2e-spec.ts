import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke } from '../support/http-client';
import { testTenant } from '../support/tenants';
import { closeAll, connectMcp, type McpConnection } from './mcp-client';
import { ADD_SCHEMA, UpstreamMcpServer } from './upstream-mcp-server';

const ACME = testTenant('acme');

function config(tools: Record<string, unknown>): Record<string, unknown> {
  return { auth: { apiKeys: [ACME.apiKey] }, lanes: { main: { concurrency: 4, queueCapacity: 4 } }, tools };
}

/** A loopback port nothing listens on now (a server was there a moment ago). */
async function closedPort(): Promise<number> {
  const server = await UpstreamMcpServer.start();
  const { port } = server;
  await server.close();
  return port;
}

describe('kind: mcp tools at start-up', () => {
  let clock: FakeClock;
  let app: TestApp | undefined;
  const upstreams: UpstreamMcpServer[] = [];
  const connections: McpConnection[] = [];

  afterEach(async () => {
    await closeOnFakeClock(app, clock);
    app = undefined;
    await closeAll(connections);
    await Promise.all(upstreams.splice(0).map((upstream) => upstream.close()));
  });

  it('starts with a named tool of a server that is down, and learns its schema once the server answers', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/mcp`;
    clock = new FakeClock();
    app = await createTestApp(
      config({ add: { lane: 'main', kind: 'mcp', url, tool: 'add', retry: { maxAttempts: 1 } } }),
      {
        clock,
      },
    );
    const connection = await connectMcp(app.url, ACME.headers);
    connections.push(connection);

    const listedWhileDown = (await connection.client.listTools()).tools;
    const whileDown = await invoke(app.url, 'add', { a: 1, b: 2 }, ACME.headers);
    upstreams.push(await UpstreamMcpServer.start(port));
    await clock.advanceAsync(1_000);

    expect(listedWhileDown).toEqual([
      expect.objectContaining({ name: 'add', inputSchema: expect.objectContaining({ type: 'object' }) }),
    ]);
    expect(listedWhileDown[0].inputSchema.properties).toBeUndefined();
    expect(whileDown.status).toBe(502);
    expect(whileDown.body.error).toMatchObject({
      kind: 'transient',
      message: "upstream of tool 'add' could not be reached (ECONNREFUSED)",
    });
    await eventually(async () => {
      const [add] = (await connection.client.listTools()).tools;
      expect(add).toMatchObject({ description: 'adds two numbers', inputSchema: ADD_SCHEMA });
    });
    const refused = await invoke(app.url, 'add', { a: 1 }, ACME.headers);
    const answered = await invoke(app.url, 'add', { a: 1, b: 2 }, ACME.headers);
    expect(refused.body.error).toMatchObject({ kind: 'schema', attempts: 0 });
    expect(answered.body.result).toEqual({ sum: 3 });
  });

  it('does not start when a server whose tools are all imported (tools: *) cannot be listed', async () => {
    const port = await closedPort();
    clock = new FakeClock();

    await expect(
      createTestApp(
        config({ up: { lane: 'main', kind: 'mcp', url: `http://127.0.0.1:${port}/mcp?key=secret`, tools: '*' } }),
        {
          clock,
        },
      ),
    ).rejects.toThrow(
      `tools.up: imports every tool of the MCP server at http://127.0.0.1:${port}/mcp, which could not be listed ` +
        'at start-up (ECONNREFUSED); name its tools (tools: [a, b]) to start without it',
    );
  });

  it('does not start when a server that answers lists no tool of the name the config gives', async () => {
    const upstream = await UpstreamMcpServer.start();
    upstreams.push(upstream);
    clock = new FakeClock();

    await expect(
      createTestApp(config({ sub: { lane: 'main', kind: 'mcp', url: upstream.url, tool: 'subtract' } }), { clock }),
    ).rejects.toThrow(
      `tools.sub: the MCP server at ${upstream.url} lists no tool 'subtract' (it lists: echo, add, fail, slow, steps)`,
    );
  });

  it('does not start when a tool the config defines has the id of one a whole server imports', async () => {
    const upstream = await UpstreamMcpServer.start();
    upstreams.push(upstream);
    clock = new FakeClock();

    await expect(
      createTestApp(
        config({
          up: { lane: 'main', kind: 'mcp', url: upstream.url, tools: '*' },
          'up.add': { lane: 'main', kind: 'builtin', builtin: 'echo' },
        }),
        { clock },
      ),
    ).rejects.toThrow("tool 'up.add' of the config is also imported from an MCP server");
    // The session opened to list the server was ended with the failed start.
    await eventually(() => expect(upstream.seen.filter((request) => request.method === 'DELETE')).toHaveLength(1));
  });

  it('waits for a hanging server at most the entry’s timeoutMs on the clock', async () => {
    const upstream = await UpstreamMcpServer.start();
    upstreams.push(upstream);
    upstream.intercept = () => true;
    clock = new FakeClock();

    const starting = createTestApp(
      config({ up: { lane: 'main', kind: 'mcp', url: upstream.url, tools: '*', timeoutMs: 2_000 } }),
      { clock },
    );
    const outcome = starting.then(
      () => 'started',
      (error: Error) => error.message,
    );
    await eventually(() => expect(upstream.seen).toHaveLength(1));
    await clock.advanceAsync(1_999);
    await new Promise((resolve) => setImmediate(resolve));
    const before = await Promise.race([outcome, Promise.resolve('waiting')]);
    await clock.advanceAsync(1);

    expect(before).toBe('waiting');
    expect(await outcome).toMatch(/could not be listed at start-up \(timeout: did not list its tools within 2000 ms\)/);
  });

  it('registers a whole server’s tools as <entry>.<name>, and only those it listed at start-up', async () => {
    const upstream = await UpstreamMcpServer.start();
    upstreams.push(upstream);
    clock = new FakeClock();
    app = await createTestApp(
      config({ up: { lane: 'main', kind: 'mcp', url: upstream.url, tools: ['add', 'echo'] } }),
      {
        clock,
      },
    );
    const connection = await connectMcp(app.url, ACME.headers);
    connections.push(connection);

    const { tools } = await connection.client.listTools();
    upstream.addTool('later');
    const unknown = await invoke(app.url, 'up.later', { n: 1 }, ACME.headers);

    expect(tools.map((tool) => tool.name)).toEqual(['up.add', 'up.echo']);
    expect(unknown.status).toBe(404);
  });
});
