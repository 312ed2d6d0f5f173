import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { FakeClock } from '../../src/common/fake-clock';
import { createServiceLogger } from '../../src/logging';
import { CapturedLog } from '../support/captured-log';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { SHARED_REDIS_URL, uniquePrefix } from '../support/redis';
import { describeRedis } from '../support/redis-availability';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { closeAll, connectMcp, type McpConnection } from './mcp-client';
import { UpstreamMcpServer } from './upstream-mcp-server';

const ACME = testTenant('acme');
/** Sent to the upstream with every request: it must never show in an answer about pins. */
const SECRET = 'upstream-secret-4f9d2c7e1b';

/** The whole server imported as `up.<name>` (echo among them), with the upstream's key as a header. */
function config(url: string, extra: Record<string, unknown> = {}, top: Record<string, unknown> = {}) {
  return {
    auth: { apiKeys: [ACME.apiKey], adminToken: ADMIN_TOKEN },
    lanes: { main: { concurrency: 4, queueCapacity: 4 } },
    tools: { up: { lane: 'main', kind: 'mcp', url, tools: '*', headers: { 'x-upstream-key': SECRET }, ...extra } },
    ...top,
  };
}

describe('kind: mcp tool pinning: a tool whose definition changes upstream', () => {
  let upstream: UpstreamMcpServer;
  const started: Array<{ app: TestApp; clock: FakeClock }> = [];
  const connections: McpConnection[] = [];

  let log: CapturedLog;

  async function start(extra: Record<string, unknown> = {}, top: Record<string, unknown> = {}): Promise<TestApp> {
    const clock = new FakeClock();
    log = new CapturedLog();
    const logger = createServiceLogger({ level: 'log', destination: log });
    const app = await createTestApp(config(upstream.url, extra, top), { clock, logger });
    started.push({ app, clock });
    return app;
  }

  async function listed(app: TestApp): Promise<string[]> {
    const connection = await connectMcp(app.url, ACME.headers);
    connections.push(connection);
    const { tools } = await connection.client.listTools();
    return tools.map((tool) => tool.name).sort();
  }

  async function changeCount(app: TestApp, pinning: string): Promise<number | undefined> {
    const scraped = await send('GET', `${app.url}/metrics`);
    return sampleValue(parsePromText(scraped.body as string), 'bulkhead_mcp_tool_changes_total', {
      tool: 'up.echo',
      pinning,
    });
  }

  /** The ledger's events of up.echo's pin, oldest first. */
  async function pinEvents(app: TestApp): Promise<string[]> {
    const events = await send('GET', `${app.url}/v1/admin/events`, { headers: AS_ADMIN });
    // Pin events have no tenant; a refused call's own event (status tool_changed too) has its caller's.
    return (events.body.events as Array<{ toolId: string; tenant: string; status: string }>)
      .filter((event) => event.toolId === 'up.echo' && event.tenant === '')
      .map((event) => event.status);
  }

  /** Changes echo upstream and waits until `app` has seen it (its server tells Bulkhead's listening session). */
  async function changeEcho(app: TestApp, pinning = 'enforce'): Promise<void> {
    // The listening stream is open once the upstream has had a GET.
    await eventually(() => expect(upstream.seen.some((request) => request.method === 'GET')).toBe(true));
    upstream.changeEcho();
    await eventually(async () => expect(await changeCount(app, pinning)).toBe(1));
  }

  beforeEach(async () => {
    upstream = await UpstreamMcpServer.start();
  });

  afterEach(async () => {
    for (const { app, clock } of started.splice(0)) await closeOnFakeClock(app, clock);
    await closeAll(connections);
    await upstream.close();
  });

  it('pins what it first sees and serves it, with every series of the metric at zero', async () => {
    const app = await start();

    expect(await listed(app)).toContain('up.echo');
    expect((await invoke(app.url, 'up.echo', { text: 'hi' }, ACME.headers)).status).toBe(200);
    expect(await changeCount(app, 'enforce')).toBe(0);
    expect(await pinEvents(app)).toEqual(['tool_pinned']);
  });

  it('quarantines it by default: not listed, its calls refused 409 tool_changed on both routes, an event and the metric', async () => {
    const app = await start();
    expect(await listed(app)).toContain('up.echo');
    const watching = await connectMcp(app.url, ACME.headers);
    connections.push(watching);
    let told = 0;
    watching.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      told++;
    });

    await changeEcho(app);

    await eventually(async () => expect(await listed(app)).not.toContain('up.echo'));
    expect(await listed(app)).toContain('up.add');
    // Sessions open at the time are told the list changed.
    await eventually(() => expect(told).toBeGreaterThan(0));
    const refused = await invoke(app.url, 'up.echo', { text: 'hi' }, ACME.headers);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ kind: 'tool_changed', jsonrpcCode: -32014, attempts: 0 });
    const connection = await connectMcp(app.url, ACME.headers);
    connections.push(connection);
    const viaMcp = await connection.client.callTool({ name: 'up.echo', arguments: { text: 'hi' } });
    expect(viaMcp).toMatchObject({ isError: true, structuredContent: { error: { kind: 'tool_changed' } } });
    expect(upstream.calls.filter((call) => call.tool === 'echo')).toEqual([]);
    expect(await pinEvents(app)).toEqual(['tool_pinned', 'tool_changed']);
    expect(log.events('tool_pin').filter((line) => line.pin === 'changed')).toEqual([
      expect.objectContaining({ level: 'warn', tool: 'up.echo', pinning: 'enforce', sha256: expect.any(String) }),
    ]);
    expect(log.text).not.toContain(SECRET);
    expect((await invoke(app.url, 'up.add', { a: 1, b: 2 }, ACME.headers)).status).toBe(200);
  });

  it('serves it again once an operator approves, answering what changed and never the upstream’s secret', async () => {
    const app = await start();
    await changeEcho(app);

    const status = await send('GET', `${app.url}/v1/admin/mcp/tools/up.echo`, { headers: AS_ADMIN });
    const approved = await send('POST', `${app.url}/v1/admin/mcp/tools/up.echo/approve`, {
      headers: AS_ADMIN,
      json: { sha256: status.body.pending.sha256 },
    });

    expect(status.body).toMatchObject({ tool: 'up.echo', pinning: 'enforce', state: 'changed' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      tool: 'up.echo',
      approved: true,
      sha256: status.body.pending.sha256,
      previousSha256: status.body.approved.sha256,
      changes: {
        description: { old: 'says the text back', new: 'says the text back, shorter' },
        inputSchema: { old: expect.any(Object), new: expect.any(Object) },
      },
    });
    expect(Object.keys(approved.body.changes)).toEqual(['description', 'inputSchema']);
    expect(JSON.stringify([status.body, approved.body])).not.toContain(SECRET);
    expect(await listed(app)).toContain('up.echo');
    expect((await invoke(app.url, 'up.echo', { text: 'hi' }, ACME.headers)).status).toBe(200);
    expect(await pinEvents(app)).toEqual(['tool_pinned', 'tool_changed', 'tool_approved']);
  });

  it('keeps the pin routes to operators: 401 without the admin token, 401 with a tenant’s key', async () => {
    const app = await start();
    await changeEcho(app);

    const anonymous = await send('POST', `${app.url}/v1/admin/mcp/tools/up.echo/approve`);
    const tenant = await send('POST', `${app.url}/v1/admin/mcp/tools/up.echo/approve`, { headers: ACME.headers });
    const reading = await send('GET', `${app.url}/v1/admin/mcp/tools/up.echo`, { headers: ACME.headers });

    expect([anonymous.status, tenant.status, reading.status]).toEqual([401, 401, 401]);
    expect((await invoke(app.url, 'up.echo', { text: 'hi' }, ACME.headers)).status).toBe(409);
  });

  it('approves nothing when the operator names a definition other than the one waiting', async () => {
    const app = await start();
    await changeEcho(app);

    const stale = await send('POST', `${app.url}/v1/admin/mcp/tools/up.echo/approve`, {
      headers: AS_ADMIN,
      json: { sha256: '0'.repeat(64) },
    });
    const malformed = await send('POST', `${app.url}/v1/admin/mcp/tools/up.echo/approve`, {
      headers: AS_ADMIN,
      json: { sha256: 'not-a-hash' },
    });
    const unknown = await send('POST', `${app.url}/v1/admin/mcp/tools/nope/approve`, { headers: AS_ADMIN });

    expect(stale.status).toBe(409);
    expect(stale.body.error.kind).toBe('tool_changed');
    expect(malformed.status).toBe(400);
    expect(unknown.status).toBe(404);
    expect((await invoke(app.url, 'up.echo', { text: 'hi' }, ACME.headers)).status).toBe(409);
  });

  it('still serves it under pinning: warn, and reports the change all the same', async () => {
    const app = await start({ pinning: 'warn' });

    await changeEcho(app, 'warn');

    expect(await listed(app)).toContain('up.echo');
    expect((await invoke(app.url, 'up.echo', { text: 'hi' }, ACME.headers)).status).toBe(200);
    expect(await pinEvents(app)).toEqual(['tool_pinned', 'tool_changed']);
  });

  it('neither compares nor reports anything under pinning: off', async () => {
    const app = await start({ pinning: 'off' });
    await eventually(() => expect(upstream.seen.some((request) => request.method === 'GET')).toBe(true));

    upstream.changeEcho();

    await eventually(async () => {
      const refused = await invoke(app.url, 'up.echo', { text: 'too long' }, ACME.headers);
      // The new schema (at most 3 characters) is in force: the listing arrived.
      expect(refused.body.error?.kind).toBe('schema');
    });
    expect((await invoke(app.url, 'up.echo', { text: 'hi' }, ACME.headers)).status).toBe(200);
    expect(await changeCount(app, 'off')).toBeUndefined();
    expect(await pinEvents(app)).toEqual([]);
    const status = await send('GET', `${app.url}/v1/admin/mcp/tools/up.echo`, { headers: AS_ADMIN });
    expect(status.status).toBe(404);
  });

  it('holds a tool to its pin from the config: a wrong pin quarantines it from the start, the right one serves it', async () => {
    const wrong = await start({ pins: { echo: 'f'.repeat(64) } });
    expect(await listed(wrong)).not.toContain('up.echo');
    expect((await invoke(wrong.url, 'up.echo', { text: 'hi' }, ACME.headers)).status).toBe(409);
    const status = await send('GET', `${wrong.url}/v1/admin/mcp/tools/up.echo`, { headers: AS_ADMIN });
    const approving = await send('POST', `${wrong.url}/v1/admin/mcp/tools/up.echo/approve`, { headers: AS_ADMIN });
    expect(status.body).toMatchObject({ pinnedInConfig: true, state: 'changed', approved: { sha256: 'f'.repeat(64) } });
    expect(approving.status).toBe(409);
    expect(approving.body.error.message).toContain(status.body.seenSha256);

    const right = await start({ pins: { echo: status.body.seenSha256 } });

    expect(await listed(right)).toContain('up.echo');
    expect((await invoke(right.url, 'up.echo', { text: 'hi' }, ACME.headers)).status).toBe(200);
  });

  it('says at start-up when a pin names a tool the server does not list', async () => {
    await start({ pins: { gone: 'f'.repeat(64) } });

    expect(log.lines.filter((line) => line.level === 'warn').map((line) => line.msg)).toContainEqual(
      expect.stringMatching(/^tools\.up: pins gone, which the MCP server at .* does not list$/),
    );
  });
});

describeRedis('kind: mcp tool pinning across replicas on one Redis', () => {
  let upstream: UpstreamMcpServer;
  const started: Array<{ app: TestApp; clock: FakeClock }> = [];

  async function replica(prefix: string): Promise<TestApp> {
    const clock = new FakeClock();
    const store = { kind: 'redis', url: SHARED_REDIS_URL, prefix, commandTimeoutMs: 2_000 };
    const app = await createTestApp(config(upstream.url, {}, { store }), { clock });
    started.push({ app, clock });
    return app;
  }

  beforeEach(async () => {
    upstream = await UpstreamMcpServer.start();
  });

  afterEach(async () => {
    for (const { app, clock } of started.splice(0)) await closeOnFakeClock(app, clock);
    await upstream.close();
  });

  it('quarantines on every replica, and what an operator approves on one is served on the other', async () => {
    const prefix = uniquePrefix();
    const one = await replica(prefix);
    const other = await replica(prefix);
    await eventually(() => expect(upstream.seen.filter((request) => request.method === 'GET')).toHaveLength(2));

    upstream.changeEcho();
    for (const app of [one, other]) {
      await eventually(async () =>
        expect((await invoke(app.url, 'up.echo', { text: 'hi' }, ACME.headers)).status).toBe(409),
      );
    }
    const approved = await send('POST', `${one.url}/v1/admin/mcp/tools/up.echo/approve`, { headers: AS_ADMIN });

    expect(approved.body).toMatchObject({ approved: true, changes: { description: expect.any(Object) } });
    expect((await invoke(one.url, 'up.echo', { text: 'hi' }, ACME.headers)).status).toBe(200);
    // The other replica hears of it when it asks the store again: the refused call asks.
    await eventually(async () =>
      expect((await invoke(other.url, 'up.echo', { text: 'hi' }, ACME.headers)).status).toBe(200),
    );
    const connection = await connectMcp(other.url, ACME.headers);
    const { tools } = await connection.client.listTools().finally(() => connection.client.close());
    expect(tools.map((tool) => tool.name)).toContain('up.echo');
    const again = await send('POST', `${other.url}/v1/admin/mcp/tools/up.echo/approve`, { headers: AS_ADMIN });
    expect(again.body).toMatchObject({ approved: false, sha256: approved.body.sha256 });
  });

  it('pins once for every replica: a replica started after a change compares with the first pin', async () => {
    const prefix = uniquePrefix();
    const first = await replica(prefix);
    expect((await invoke(first.url, 'up.echo', { text: 'hi' }, ACME.headers)).status).toBe(200);

    upstream.changeEcho();
    const later = await replica(prefix);

    expect((await invoke(later.url, 'up.echo', { text: 'hi' }, ACME.headers)).status).toBe(409);
  });
});
