import { closeAll, connectMcp, type McpConnection } from '../mcp/mcp-client';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { invoke, send } from '../support/http-client';
import { testTenant } from '../support/tenants';

const ACME = testTenant('acme');
const GLOBEX = testTenant('globex');
const OPS = testTenant('ops');

const echo = { lane: 'main', kind: 'builtin', builtin: 'echo' };

/**
 * Which tools each tenant may see and call (`toolAccess`): a tool a tenant may not call does not
 * exist for it, over REST, in a batch and over MCP, answered exactly as a tool that does not exist.
 */
const startApp = (platform: (typeof PLATFORMS)[number]) =>
  createTestApp(
    {
      auth: { apiKeys: [ACME.apiKey, GLOBEX.apiKey, OPS.apiKey] },
      lanes: { main: { concurrency: 4, queueCapacity: 4 } },
      tools: { 'crm.lookup': echo, 'crm.delete_contact': echo, 'admin.restart': echo, echo },
      toolAccess: {
        default: { deny: ['admin.*'] },
        tenants: {
          acme: { allow: ['crm.*', 'echo'], deny: ['crm.delete_*'] },
          ops: { allow: ['admin.*'] },
        },
      },
    },
    { platform },
  );

describe.each(PLATFORMS)('tools each tenant may see and call, on %s', (platform) => {
  let app: TestApp;

  beforeEach(async () => {
    app = await startApp(platform);
  });

  afterEach(() => app?.close());

  const call = (tool: string, headers: Record<string, string>) => invoke(app.url, tool, { n: 1 }, headers);

  it('answers a tool the tenant may not call as one that does not exist', async () => {
    expect((await call('crm.lookup', ACME.headers)).status).toBe(200);
    expect((await call('echo', ACME.headers)).status).toBe(200);
    expect((await call('admin.restart', OPS.headers)).status).toBe(200);
    expect((await call('crm.lookup', GLOBEX.headers)).status).toBe(200);

    const refused = await call('crm.delete_contact', ACME.headers);
    const missing = await call('crm.no_such_tool', ACME.headers);
    expect(refused.status).toBe(404);
    expect(refused.body.error).toMatchObject({ kind: 'not_found', message: "unknown tool 'crm.delete_contact'" });
    // The same answer as for no such tool: its existence is not told.
    expect(Object.keys(refused.body.error)).toEqual(Object.keys(missing.body.error));
    expect((await call('admin.restart', GLOBEX.headers)).status).toBe(404);
    expect((await call('echo', OPS.headers)).status).toBe(404);
  });

  it('holds every entry of a batch to the same rule', async () => {
    const answer = await send('POST', `${app.url}/v1/tools/batch`, {
      json: {
        calls: [
          { toolId: 'crm.lookup', arguments: {} },
          { toolId: 'crm.delete_contact', arguments: {} },
          { toolId: 'admin.restart', arguments: {} },
        ],
      },
      headers: ACME.headers,
    });

    expect(answer.status).toBe(200);
    const results = answer.body.results as Array<{ toolId?: string; error?: { kind: string } }>;
    expect(results[0]).toMatchObject({ toolId: 'crm.lookup', result: {} });
    expect(results[1].error?.kind).toBe('not_found');
    expect(results[2].error?.kind).toBe('not_found');
  });
});

describe.each(PLATFORMS)('tools each tenant may see and call, over MCP, on %s', (platform) => {
  let app: TestApp;
  const connections: McpConnection[] = [];

  beforeEach(async () => {
    app = await startApp(platform);
  });

  afterEach(async () => {
    await closeAll(connections);
    await app?.close();
  });

  it('lists over MCP only what the tenant may call, and refuses the rest as unknown', async () => {
    const names = async (headers: Record<string, string>) => {
      const connection = await connectMcp(app.url, headers);
      connections.push(connection);
      return { connection, listed: (await connection.client.listTools()).tools.map((tool) => tool.name).sort() };
    };

    const acme = await names(ACME.headers);
    const globex = await names(GLOBEX.headers);
    const ops = await names(OPS.headers);

    expect(acme.listed).toEqual(['crm.lookup', 'echo']);
    expect(globex.listed).toEqual(['crm.delete_contact', 'crm.lookup', 'echo']);
    expect(ops.listed).toEqual(['admin.restart']);
    const refused = acme.connection.client.callTool({ name: 'crm.delete_contact', arguments: {} });
    const missing = acme.connection.client.callTool({ name: 'crm.no_such_tool', arguments: {} });
    await expect(refused).rejects.toThrow("unknown tool 'crm.delete_contact'");
    await expect(missing).rejects.toThrow("unknown tool 'crm.no_such_tool'");
    expect(await ops.connection.client.callTool({ name: 'admin.restart', arguments: { n: 1 } })).toMatchObject({
      structuredContent: { toolId: 'admin.restart', result: { n: 1 } },
    });
  });
});
