import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FakeClock } from '../../src/common/fake-clock';
import { McpSessions } from '../../src/mcp';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { expectEnvelope } from '../support/envelope';
import { eventually } from '../support/eventually';
import { type Response, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { getLanes } from '../support/service-reads';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { json, Upstream } from '../support/upstream';
import { closeAll, connectMcp, type McpConnection } from './mcp-client';

const ACME = testTenant('acme');
const EVIL = testTenant('evil', 'evil-key-9876543210');
const BOB = testTenant('bob');

const ACCEPT = { accept: 'application/json, text/event-stream' };
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

function config(upstreamUrl: string, mcp: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    auth: { apiKeys: [ACME.apiKey, EVIL.apiKey, BOB.apiKey], adminToken: ADMIN_TOKEN },
    lanes: { main: { concurrency: 8, queueCapacity: 8 }, slow: { concurrency: 4, queueCapacity: 4 } },
    tools: {
      fetch: { lane: 'main', kind: 'http', url: upstreamUrl, retry: { maxAttempts: 1 } },
      secret: { lane: 'main', kind: 'builtin', builtin: 'echo', containment: 'deny' },
      wait: { lane: 'slow', kind: 'builtin', builtin: 'delay', timeoutMs: 600_000 },
    },
    mcp,
  };
}

/** The HTTP status a refused MCP request ended with, as the SDK client reports it. */
async function statusOf(promise: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof StreamableHTTPError) return error.code!;
    throw error;
  }
}

describe.each(PLATFORMS)('MCP sessions and tenants, on %s', (platform) => {
  let clock: FakeClock;
  let app: TestApp | undefined;
  let upstream: Upstream;
  const connections: McpConnection[] = [];

  async function start(mcp: Record<string, unknown> = {}, more: Record<string, unknown> = {}): Promise<TestApp> {
    clock = new FakeClock();
    app = await createTestApp({ ...config(upstream.url('/tool'), mcp), ...more }, { platform, clock });
    return app;
  }

  async function connect(headers: Record<string, string>): Promise<McpConnection> {
    const connection = await connectMcp(app!.url, headers);
    connections.push(connection);
    return connection;
  }

  /** A raw request on a session, as any MCP client sends it. */
  function post(sessionId: string, headers: Record<string, string>, body: unknown): Promise<Response> {
    return send('POST', `${app!.url}/mcp`, {
      json: body,
      headers: { ...ACCEPT, ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
    });
  }

  const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
  const sessions = () => app!.app.get(McpSessions).size;

  beforeEach(async () => {
    upstream = await Upstream.start(json(200, { ok: true }));
  });

  afterEach(async () => {
    await closeAll(connections);
    await closeOnFakeClock(app, clock);
    await upstream.close();
    app = undefined;
  });

  describe('tenants', () => {
    it('runs a contained tenant’s calls on the isolated pool and a normal tenant’s on the normal one', async () => {
      await start();
      const acme = await connect(ACME.headers);
      const evil = await connect(EVIL.headers);
      const contained = await send('PUT', `${app!.url}/v1/admin/containment/evil`, {
        json: { state: 'active', posture: 'degraded', reason: 'exfiltration' },
        headers: AS_ADMIN,
      });
      expect(contained.status).toBe(200);

      const [acmeCall, evilCall] = await Promise.all([
        acme.client.callTool({ name: 'fetch', arguments: { who: 'acme' } }),
        evil.client.callTool({ name: 'fetch', arguments: { who: 'evil' } }),
      ]);

      // The session evil opened before it was contained: the decision is each request's.
      expect(acmeCall.structuredContent).toMatchObject({ pool: 'normal', result: { ok: true } });
      expect(evilCall.structuredContent).toMatchObject({ pool: 'isolated', result: { ok: true } });
      const prom = parsePromText((await send('GET', `${app!.url}/metrics`)).body as string);
      expect(sampleValue(prom, 'bulkhead_http_pool_peak', { pool: 'isolated' })).toBe(1);
      expect(sampleValue(prom, 'bulkhead_http_pool_peak', { pool: 'normal' })).toBe(1);
      expect((await evil.client.listTools()).tools.map((tool) => tool.name)).toEqual(['fetch', 'wait']);
      expect((await acme.client.listTools()).tools.map((tool) => tool.name)).toEqual(['fetch', 'secret', 'wait']);
      expect(await evil.client.callTool({ name: 'secret', arguments: {} })).toMatchObject({
        isError: true,
        structuredContent: { error: { kind: 'contained' } },
      });
    });

    it('refuses every request of a tenant contained under the hard posture with 403', async () => {
      await start();
      const evil = await connect(EVIL.headers);
      await send('PUT', `${app!.url}/v1/admin/containment/evil`, {
        json: { state: 'active', posture: 'hard' },
        headers: AS_ADMIN,
      });

      expect(await statusOf(evil.client.listTools())).toBe(403);
      expectEnvelope(
        await send('POST', `${app!.url}/mcp`, { json: INITIALIZE, headers: { ...ACCEPT, ...EVIL.headers } }),
        403,
        'contained',
      );
    });

    it('refuses a session id presented with another tenant’s key as if it did not exist', async () => {
      await start();
      const acme = await connect(ACME.headers);

      const asEvil = await post(acme.sessionId, EVIL.headers, listTools);
      const asNobody = await post(acme.sessionId, {}, listTools);
      const asAcme = await post(acme.sessionId, ACME.headers, listTools);

      expectEnvelope(asEvil, 404, 'not_found');
      expect(asEvil.body.error.message).toBe('unknown MCP session: it ended or expired; initialize a new one');
      expectEnvelope(asNobody, 404, 'not_found');
      expect(asAcme.status).toBe(200);
      expect(await statusOf(acme.client.listTools())).toBe('ok');
    });

    it('refuses a key that is not configured, and a request without a session that is not an initialize', async () => {
      await start();

      expectEnvelope(
        await send('POST', `${app!.url}/mcp`, {
          json: INITIALIZE,
          headers: { ...ACCEPT, authorization: 'Bearer nope' },
        }),
        401,
        'unauthorized',
      );
      expectEnvelope(
        await send('POST', `${app!.url}/mcp`, { json: listTools, headers: { ...ACCEPT, ...ACME.headers } }),
        400,
        'invalid_request',
      );
      expectEnvelope(await send('GET', `${app!.url}/mcp`, { headers: ACME.headers }), 400, 'invalid_request');
    });

    it('answers the transport’s own refusals with the envelope, at the transport’s status', async () => {
      await start();

      const notAcceptable = await send('POST', `${app!.url}/mcp`, {
        json: INITIALIZE,
        headers: { ...ACME.headers, accept: 'application/json' },
      });

      expectEnvelope(notAcceptable, 406, 'invalid_request');
      expect(notAcceptable.body.error.message).toMatch(/Not Acceptable/);
      expect(sessions()).toBe(0);
    });
  });

  describe('bounds', () => {
    it('closes the tenant’s session idle longest to open one past maxSessionsPerTenant, never one in use', async () => {
      await start({ maxSessions: 10, maxSessionsPerTenant: 2 });
      const first = await connect(ACME.headers);
      const second = await connect(ACME.headers);
      const busy = first.client.callTool({ name: 'wait', arguments: { ms: 1_000 } });
      await eventually(async () => expect((await getLanes(app!.url)).slow.active).toBe(1));

      const third = await connect(ACME.headers);

      // The first session is older, but a call runs in it: the second goes.
      expect(await statusOf(second.client.listTools())).toBe(404);
      expect(await statusOf(third.client.listTools())).toBe('ok');
      expect(sessions()).toBe(2);
      await clock.advanceAsync(1_000);
      expect(await busy).toMatchObject({ structuredContent: { result: { waitedMs: 1_000 } } });
    });

    it('refuses a new session with 503 queue_full when every session in the way has a request in flight', async () => {
      await start({ maxSessions: 10, maxSessionsPerTenant: 1 });
      const only = await connect(ACME.headers);
      const busy = only.client.callTool({ name: 'wait', arguments: { ms: 1_000 } });
      await eventually(async () => expect((await getLanes(app!.url)).slow.active).toBe(1));

      const refused = await send('POST', `${app!.url}/mcp`, {
        json: INITIALIZE,
        headers: { ...ACCEPT, ...ACME.headers },
      });

      expectEnvelope(refused, 503, 'queue_full');
      expect(refused.headers['retry-after']).toBe('1');
      // Another tenant's bound is its own.
      expect(await statusOf(connect(EVIL.headers))).toBe('ok');
      await clock.advanceAsync(1_000);
      await busy;
      expect(await statusOf(connect(ACME.headers))).toBe('ok');
      expect(await statusOf(only.client.listTools())).toBe(404);
    });

    it('closes the service’s session idle longest, whichever tenant’s, past maxSessions', async () => {
      await start({ maxSessions: 3, maxSessionsPerTenant: 3 });
      const acme = await connect(ACME.headers);
      await clock.advanceAsync(10);
      const evil = await connect(EVIL.headers);
      await clock.advanceAsync(10);
      const bob = await connect(BOB.headers);
      await clock.advanceAsync(10);
      await acme.client.listTools(); // acme's is now the most recently used

      await connect(BOB.headers);

      expect(await statusOf(evil.client.listTools())).toBe(404);
      expect(await statusOf(acme.client.listTools())).toBe('ok');
      expect(await statusOf(bob.client.listTools())).toBe('ok');
      expect(sessions()).toBe(3);
    });

    it('expires a session idle for sessionIdleMs of the clock, and keeps one in use', async () => {
      await start({ sessionIdleMs: 60_000 });
      const idle = await connect(ACME.headers);
      const active = await connect(ACME.headers);
      const working = await connect(EVIL.headers);

      await clock.advanceAsync(50_000);
      await active.client.listTools();
      const call = working.client.callTool({ name: 'wait', arguments: { ms: 70_000 } });
      await eventually(async () => expect((await getLanes(app!.url)).slow.active).toBe(1));
      await clock.advanceAsync(10_000);

      expect(sessions()).toBe(2); // the sweep closed the idle one on its own
      expect(await statusOf(idle.client.listTools())).toBe(404);
      expect(await statusOf(active.client.listTools())).toBe('ok');
      await clock.advanceAsync(60_000);
      expect(await call).toMatchObject({ structuredContent: { result: { waitedMs: 70_000 } } });
      expect(await statusOf(working.client.listTools())).toBe('ok');
      await clock.advanceAsync(60_000);
      expect(await statusOf(active.client.listTools())).toBe(404);
      expect(await statusOf(working.client.listTools())).toBe(404);
      expect(sessions()).toBe(0);
    });

    it('lets a call in flight finish at shutdown, then closes the sessions and refuses new ones', async () => {
      await start({}, { server: { shutdownDrainMs: 10_000 } });
      const acme = await connect(ACME.headers);
      const call = acme.client.callTool({ name: 'wait', arguments: { ms: 2_000 } });
      await eventually(async () => expect((await getLanes(app!.url)).slow.active).toBe(1));

      const closing = app!.close();
      await eventually(async () =>
        expectEnvelope(
          await send('POST', `${app!.url}/mcp`, { json: INITIALIZE, headers: { ...ACCEPT, ...EVIL.headers } }),
          503,
          'stopped',
        ),
      );
      expect(sessions()).toBe(1);
      await clock.advanceAsync(2_000);

      expect(await call).toMatchObject({ structuredContent: { result: { waitedMs: 2_000 } } });
      await closing;
      expect(sessions()).toBe(0);
      app = undefined;
    });

    it('ends a session on DELETE: 200, then 404 for its id', async () => {
      await start();
      const acme = await connect(ACME.headers);

      const ended = await send('DELETE', `${app!.url}/mcp`, {
        headers: { ...ACME.headers, 'mcp-session-id': acme.sessionId },
      });

      expect(ended).toMatchObject({ status: 200, body: { closed: true } });
      expectEnvelope(await post(acme.sessionId, ACME.headers, listTools), 404, 'not_found');
      expect(sessions()).toBe(0);
    });
  });
});
