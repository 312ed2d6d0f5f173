import { request } from 'undici';
import { FakeClock } from '../../src/common/fake-clock';
import { McpSessions } from '../../src/mcp';
import { DirectCalls } from '../../src/mcp/direct-calls';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { getLanes } from '../support/service-reads';
import { testTenant } from '../support/tenants';

const ACME = testTenant('acme');
const PROTOCOL_VERSION = '2025-06-18';

const CONFIG = {
  auth: { apiKeys: [ACME.apiKey] },
  lanes: {
    main: { concurrency: 4, queueCapacity: 4 },
    render: { concurrency: 1, queueCapacity: 1, queueTtlMs: 120_000 },
  },
  tools: {
    echo: { lane: 'main', kind: 'builtin', builtin: 'echo' },
    render: { lane: 'render', kind: 'builtin', builtin: 'delay' },
    // Nothing listens on port 9: the tool fails at once, `transient`.
    fetch: { lane: 'main', kind: 'http', url: 'http://127.0.0.1:9/tool', retry: { maxAttempts: 1 } },
    strict: {
      lane: 'main',
      kind: 'http',
      url: 'http://127.0.0.1:9/strict',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    },
  },
};

/** One HTTP answer as the client reads it: everything but the date, and the random call id. */
interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/**
 * The direct path answers plain `tools/call` requests without the SDK's transport and server:
 * each answer here is compared, byte for byte but the date and the generated call id, with the
 * SDK's answer to the same request on the same session (the direct path switched off).
 */
describe.each(PLATFORMS.flatMap((platform) => [['sse', platform] as const, ['json', platform] as const]))(
  'MCP tools/call the direct way (%s answers), on %s',
  (responses, platform) => {
    let clock: FakeClock;
    let app: TestApp | undefined;
    let sessions: McpSessions;
    let headers: Record<string, string>;
    let runs: jest.SpiedFunction<DirectCalls['run']>;
    let nextId = 10;

    beforeEach(async () => {
      clock = new FakeClock();
      app = await createTestApp({ ...CONFIG, mcp: { responses } }, { platform, clock });
      sessions = app.app.get(McpSessions);
      runs = jest.spyOn(DirectCalls.prototype, 'run');
      headers = await openSession(app.url);
    });

    afterEach(async () => {
      runs.mockRestore();
      await closeOnFakeClock(app, clock);
      app = undefined;
    });

    function post(message: unknown): Promise<Answer> {
      return answerOf(app!.url, headers, message);
    }

    /** The answers to `params` the direct way and then through the SDK, each with an id of its own. */
    async function bothWays(method: string, params: unknown): Promise<{ direct: Answer; sdk: Answer }> {
      const id = nextId++;
      sessions.answersDirectly = true;
      const direct = await post({ jsonrpc: '2.0', id, method, params });
      sessions.answersDirectly = false;
      const sdk = await post({ jsonrpc: '2.0', id, method, params });
      return { direct, sdk };
    }

    it('answers a success as the SDK does', async () => {
      const { direct, sdk } = await bothWays('tools/call', { name: 'echo', arguments: { hello: 'world' } });

      expect(runs).toHaveBeenCalledTimes(1);
      expect(direct).toEqual(sdk);
      expect(direct.status).toBe(200);
      expect(direct.body).toContain('"structuredContent":{"callId":"<call id>"');
    });

    it.each([
      ['a failure of the tool', { name: 'fetch', arguments: {} }, 'transient'],
      ['arguments its input schema refuses', { name: 'strict', arguments: { q: 1 } }, 'schema'],
    ])('answers %s as the SDK does: an isError result', async (_what, params, kind) => {
      const { direct, sdk } = await bothWays('tools/call', params);

      expect(runs).toHaveBeenCalledTimes(1);
      expect(direct).toEqual(sdk);
      expect(direct.body).toContain('"isError":true');
      expect(direct.body).toContain(`"kind":"${kind}"`);
    });

    it.each([
      ['an unknown tool', { name: 'nope', arguments: {} }, -32601],
      [
        'a malformed idempotency key',
        { name: 'echo', arguments: {}, _meta: { 'io.bulkhead/idempotency-key': ' ' } },
        -32600,
      ],
    ])('answers %s as the SDK does: a JSON-RPC error with the envelope', async (_what, params, code) => {
      const { direct, sdk } = await bothWays('tools/call', params);

      expect(runs).toHaveBeenCalledTimes(1);
      expect(direct).toEqual(sdk);
      expect(direct.body).toContain(`"error":{"code":${code}`);
    });

    it.each([
      ['params that are not an object', 'not an object'],
      ['arguments that are not an object', { name: 'echo', arguments: [1] }],
      ['a name that is not a string', { name: 7 }],
      ['a progress token that is not a token', { name: 'echo', _meta: { progressToken: 1.5 } }],
      ['a task', { name: 'echo', task: { ttl: 1_000 } }],
    ])('leaves %s to the SDK', async (_what, params) => {
      const { direct, sdk } = await bothWays('tools/call', params);

      expect(runs).not.toHaveBeenCalled();
      expect(direct).toEqual(sdk);
    });

    it('leaves a request with an unsupported protocol version, or a wrong Accept, to the SDK', async () => {
      const message = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo' } };

      const oldVersion = await answerOf(app!.url, { ...headers, 'mcp-protocol-version': '1999-01-01' }, message);
      const jsonOnly = await answerOf(app!.url, { ...headers, accept: 'application/json' }, message);

      expect(runs).not.toHaveBeenCalled();
      expect(oldVersion.status).toBe(400);
      expect(jsonOnly.status).toBe(406);
    });

    it('answers a lane’s refusal as the SDK does', async () => {
      const running = post({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'render', arguments: { ms: 5_000 } },
      });
      const queued = post({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'render', arguments: { ms: 1 } },
      });
      await eventually(async () => expect((await getLanes(app!.url)).render).toMatchObject({ active: 1, waiting: 1 }));

      const { direct, sdk } = await bothWays('tools/call', { name: 'render', arguments: { ms: 1 } });

      expect(direct).toEqual(sdk);
      expect(direct.body).toContain('"kind":"queue_full"');
      await clock.advanceAsync(5_001);
      await Promise.all([running, queued]);
    });

    it('ends the answer of a waiting call cancelled by notifications/cancelled as the SDK does, after its progress', async () => {
      const running = post({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'render', arguments: { ms: 5_000 } },
      });
      await eventually(async () => expect((await getLanes(app!.url)).render).toMatchObject({ active: 1 }));

      async function cancelled(id: number): Promise<Answer> {
        const params = { name: 'render', arguments: { ms: 1 }, _meta: { progressToken: `p-${id}` } };
        const answering = post({ jsonrpc: '2.0', id, method: 'tools/call', params });
        await eventually(async () => expect((await getLanes(app!.url)).render).toMatchObject({ waiting: 1 }));
        const notified = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });
        expect(notified.status).toBe(202);
        const answer = await answering;
        await eventually(async () => expect((await getLanes(app!.url)).render).toMatchObject({ waiting: 0 }));
        return { ...answer, body: answer.body.replaceAll(`p-${id}`, '<token>') };
      }
      sessions.answersDirectly = true;
      const direct = await cancelled(20);
      sessions.answersDirectly = false;
      const sdk = await cancelled(21);

      expect(runs).toHaveBeenCalledTimes(2); // the running call, and the first cancelled one
      expect(direct).toEqual(sdk);
      if (responses === 'sse') {
        expect(direct.body).toMatch(/^event: message\ndata: \{"method":"notifications\/progress".*\n\n$/);
      } else {
        expect(direct).toMatchObject({ status: 202, body: '' });
      }
      await clock.advanceAsync(5_000);
      await running;
    });

    it('ends the answer of a call in flight when its session is deleted, as the SDK does', async () => {
      async function endedBySession(): Promise<Answer> {
        const answering = post({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'render', arguments: { ms: 5_000 } },
        });
        await eventually(async () => expect((await getLanes(app!.url)).render).toMatchObject({ active: 1 }));
        const { 'content-type': _type, ...bodiless } = headers;
        const ended = await request(`${app!.url}/mcp`, { method: 'DELETE', headers: bodiless });
        await ended.body.text();
        expect(ended.statusCode).toBe(200);
        const answer = await answering;
        await eventually(async () => expect((await getLanes(app!.url)).render).toMatchObject({ active: 0 }));
        headers = await openSession(app!.url);
        return answer;
      }
      sessions.answersDirectly = true;
      const direct = await endedBySession();
      sessions.answersDirectly = false;
      const sdk = await endedBySession();

      expect(runs).toHaveBeenCalledTimes(1);
      expect({ ...direct, headers: withoutSession(direct.headers) }).toEqual({
        ...sdk,
        headers: withoutSession(sdk.headers),
      });
    });
  },
);

/** Opens a session with a raw `initialize` and its `initialized` notification; the headers of its requests. */
async function openSession(base: string): Promise<Record<string, string>> {
  const plain = { ...ACME.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const opened = await request(`${base}/mcp`, {
    method: 'POST',
    headers: plain,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    }),
  });
  await opened.body.text();
  const onSession = {
    ...plain,
    'mcp-session-id': String(opened.headers['mcp-session-id']),
    'mcp-protocol-version': PROTOCOL_VERSION,
  };
  await answerOf(base, onSession, { jsonrpc: '2.0', method: 'notifications/initialized' });
  return onSession;
}

async function answerOf(base: string, headers: Record<string, string>, message: unknown): Promise<Answer> {
  const response = await request(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(message) });
  const body = (await response.body.text()).replace(/"callId":"[^"]+"/g, '"callId":"<call id>"');
  const { date: _date, ...rest } = response.headers;
  return { status: response.statusCode, headers: rest, body };
}

function withoutSession(headers: Record<string, unknown>): Record<string, unknown> {
  const { 'mcp-session-id': _id, ...rest } = headers;
  return rest;
}
