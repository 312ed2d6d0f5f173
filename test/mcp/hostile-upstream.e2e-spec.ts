import type { ServerResponse } from 'node:http';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { invoke, send } from '../support/http-client';
import { testTenant } from '../support/tenants';
import { closeAll, connectMcp, type McpConnection } from './mcp-client';
import { type McpRequestSeen, UpstreamMcpServer } from './upstream-mcp-server';

const ACME = testTenant('acme');

/** An event of an answer's stream. */
function event(data: string): string {
  return `event: message\ndata: ${data}\n\n`;
}

function resultOf(id: McpRequestSeen['id'], result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

/** A structured content nested `depth` arrays deep, as text (JSON.parse takes it; JSON.stringify overflows). */
function deepText(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

/** What a hostile upstream answers a `tools/call` with: the body of a 200 event stream, or raw. */
type Hostile = (seen: McpRequestSeen) => { contentType: string; body: string };

const sse =
  (body: (seen: McpRequestSeen) => string): Hostile =>
  (seen) => ({
    contentType: 'text/event-stream',
    body: body(seen),
  });

/**
 * An upstream MCP server that answers badly on purpose: each bad answer costs the one call that
 * met it (a `transient` failure, or its result when the garbage was beside it), the next call is
 * answered as usual, nothing rejects unhandled, and the service stays up.
 */
describe('kind: mcp tools with a hostile upstream', () => {
  let clock: FakeClock;
  let upstream: UpstreamMcpServer;
  let app: TestApp | undefined;
  let hostile: Hostile | undefined;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  const connections: McpConnection[] = [];

  beforeAll(() => process.on('unhandledRejection', onUnhandled));
  afterAll(() => process.off('unhandledRejection', onUnhandled));

  beforeEach(async () => {
    upstream = await UpstreamMcpServer.start();
    hostile = undefined;
    upstream.intercept = (seen, response: ServerResponse) => {
      if (seen.rpc !== 'tools/call' || !hostile) return false;
      const { contentType, body } = hostile(seen);
      response.writeHead(200, { 'content-type': contentType }).end(body);
      return true;
    };
    clock = new FakeClock();
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey] },
        lanes: { main: { concurrency: 4, queueCapacity: 4 } },
        tools: {
          up: { lane: 'main', kind: 'mcp', url: upstream.url, tools: '*', timeoutMs: 5_000, retry: { maxAttempts: 1 } },
        },
      },
      { clock },
    );
  });

  afterEach(async () => {
    await upstream.close();
    await closeOnFakeClock(app, clock);
    app = undefined;
    await closeAll(connections);
    expect(unhandled).toEqual([]);
  });

  /** The next call, with the upstream honest again: answered as usual. */
  async function expectNextCallAnswered(): Promise<void> {
    hostile = undefined;
    const next = await invoke(app!.url, 'up.add', { a: 2, b: 3 }, ACME.headers);
    expect(next.status).toBe(200);
    expect(next.body.result).toEqual({ sum: 5 });
    expect((await send('GET', `${app!.url}/health/live`)).status).toBe(200);
  }

  it.each<[string, Hostile]>([
    ['a result that is a number', sse((seen) => event(resultOf(seen.id, 5)))],
    ['content that is not a list', sse((seen) => event(resultOf(seen.id, { content: 5 })))],
    ['a content block of no known type', sse((seen) => event(resultOf(seen.id, { content: [{ type: 7 }] })))],
    ['isError that is not a boolean', sse((seen) => event(resultOf(seen.id, { content: [], isError: 'yes' })))],
    [
      'structured content nested 50,000 arrays deep',
      sse((seen) =>
        event(`{"jsonrpc":"2.0","id":${seen.id},"result":{"structuredContent":{"a":${deepText(50_000)}}}}`),
      ),
    ],
    ['an event that is not JSON', sse(() => event('{"jsonrpc":'))],
    ['a JSON body that is not JSON', () => ({ contentType: 'application/json', body: '{"jsonrpc":"2.0",' })],
    [
      'a JSON body whose result is a string',
      (seen) => ({ contentType: 'application/json', body: resultOf(seen.id, 'x') }),
    ],
  ])('fails the one call answered with %s as transient', async (_what, answer) => {
    hostile = answer;

    const failed = await invoke(app!.url, 'up.add', { a: 1, b: 2 }, ACME.headers);

    expect(failed.status).toBe(502);
    expect(failed.body.error.kind).toBe('transient');
    await expectNextCallAnswered();
  });

  it('answers a call whose result names prototype keys, and changes no prototype', async () => {
    hostile = sse((seen) =>
      event(
        `{"jsonrpc":"2.0","id":${seen.id},"result":{"content":[],"structuredContent":{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}}}`,
      ),
    );

    const answered = await invoke(app!.url, 'up.add', { a: 1, b: 2 }, ACME.headers);

    expect(answered.status).toBe(200);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await expectNextCallAnswered();
  });

  it('answers a call whose result comes after a giant progress token and a flood of notifications and requests', async () => {
    const flood = (seen: McpRequestSeen) => {
      const events: string[] = [
        event(
          JSON.stringify({
            jsonrpc: '2.0',
            method: 'notifications/progress',
            params: { progressToken: 1e308, progress: -1 },
          }),
        ),
        event(
          JSON.stringify({
            jsonrpc: '2.0',
            method: 'notifications/progress',
            params: { progressToken: 'p'.repeat(50_000), progress: 1 },
          }),
        ),
      ];
      for (let index = 0; index < 5_000; index++) {
        events.push(
          event(JSON.stringify({ jsonrpc: '2.0', method: `notifications/unknown_${index % 7}`, params: { index } })),
        );
      }
      // Requests of a server Bulkhead declared no capability for: answering each would be a POST back.
      for (let index = 0; index < 200; index++) {
        events.push(
          event(
            JSON.stringify({
              jsonrpc: '2.0',
              id: 1_000 + index,
              method: index % 2 ? 'ping' : 'sampling/createMessage',
              params: {},
            }),
          ),
        );
      }
      events.push(event(JSON.stringify({ jsonrpc: '2.0', id: 424242, result: { content: [] } })));
      events.push(event(resultOf(seen.id, { content: [], structuredContent: { sum: 3 } })));
      return events.join('');
    };
    hostile = sse(flood);
    const before = upstream.seen.length;

    const answered = await invoke(app!.url, 'up.add', { a: 1, b: 2 }, ACME.headers);

    expect(answered.body).toMatchObject({ result: { sum: 3 } });
    expect(answered.status).toBe(200);
    // The session's opening and the call: no answer was sent back to the server's requests.
    expect(upstream.seen.slice(before).filter((seen) => seen.method === 'POST' && seen.rpc === undefined)).toEqual([]);
    expect(upstream.seen.slice(before).map((seen) => seen.rpc)).toContain('tools/call');
    await expectNextCallAnswered();
  });

  it('fails the one /mcp call whose upstream answers garbage, and the session goes on', async () => {
    const connection = await connectMcp(app!.url, ACME.headers);
    connections.push(connection);
    hostile = sse((seen) => event(resultOf(seen.id, { content: [{ type: 'image' }] })));

    const failed = await connection.client.callTool({ name: 'up.add', arguments: { a: 1, b: 2 } });
    hostile = undefined;
    const answered = await connection.client.callTool({ name: 'up.add', arguments: { a: 1, b: 2 } });

    expect(failed.isError).toBe(true);
    expect(failed.structuredContent).toMatchObject({ error: { kind: 'transient' } });
    expect(answered.isError).toBeUndefined();
  });
});
