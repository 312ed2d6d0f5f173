import { request } from 'undici';
import { McpSessions } from '../../src/mcp';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';

const PROTOCOL_VERSION = '2025-06-18';
const EVIL = 'http://evil.example.com';
const PLAIN = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The shipped config's way in: callers without a key are tenant `anonymous`. */
const ANONYMOUS = {
  auth: { allowAnonymous: true },
  lanes: { main: { concurrency: 2, queueCapacity: 2 } },
  tools: { echo: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
};

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'test', version: '1' } },
};

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

async function send(
  base: string,
  method: 'POST' | 'GET' | 'DELETE',
  headers: Record<string, string>,
  message?: unknown,
): Promise<Answer> {
  // Only a POST has a body, and only a body a content type.
  const { 'content-type': contentType, ...bodiless } = headers;
  const response = await request(`${base}/mcp`, {
    method,
    headers: method === 'POST' ? { ...bodiless, 'content-type': contentType ?? 'application/json' } : bodiless,
    body: message === undefined ? undefined : JSON.stringify(message),
  });
  // A GET that was let through is a stream that stays open: its head says enough.
  const body = method === 'GET' && response.statusCode === 200 ? '' : await response.body.text();
  if (method === 'GET' && response.statusCode === 200) response.body.destroy();
  return { status: response.statusCode, headers: response.headers, body };
}

/** A session opened without Origin (an agent runtime), ready for calls: its headers. */
async function openSession(base: string): Promise<Record<string, string>> {
  const opened = await send(base, 'POST', PLAIN, INITIALIZE);
  expect(opened.status).toBe(200);
  const onSession = {
    ...PLAIN,
    'mcp-session-id': String(opened.headers['mcp-session-id']),
    'mcp-protocol-version': PROTOCOL_VERSION,
  };
  expect((await send(base, 'POST', onSession, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(
    202,
  );
  return onSession;
}

function echoCall(id: number) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { hello: 'world' } } };
}

/** The refusal: 403, the envelope as a JSON-RPC error without id. */
function expectRefused(answer: Answer): void {
  expect(answer.status).toBe(403);
  expect(JSON.parse(answer.body)).toEqual({
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      kind: 'invalid_request',
      message: expect.stringMatching(/origin is not allowed|Host/) as unknown,
      attempts: 0,
      jsonrpcCode: -32600,
    },
  });
}

describe.each(PLATFORMS)('/mcp refuses web pages it does not allow (DNS rebinding), on %s', (platform) => {
  let app: TestApp | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  describe('with the default settings', () => {
    beforeEach(async () => {
      app = await createTestApp(ANONYMOUS, { platform });
    });

    it('refuses an initialize from another site, opening no session', async () => {
      const answer = await send(app!.url, 'POST', { ...PLAIN, origin: EVIL }, INITIALIZE);

      expectRefused(answer);
      expect(answer.headers['mcp-session-id']).toBeUndefined();
      expect(app!.app.get(McpSessions).size).toBe(0);
    });

    it("refuses the conformance suite's rebinding request: Host and Origin both the attacker's", async () => {
      const answer = await send(
        app!.url,
        'POST',
        { ...PLAIN, host: 'evil.example.com', origin: 'http://evil.example.com' },
        INITIALIZE,
      );

      expectRefused(answer);
    });

    it('refuses a tools/call from another site on an open session: the direct path too', async () => {
      const session = await openSession(app!.url);

      expectRefused(await send(app!.url, 'POST', { ...session, origin: EVIL }, echoCall(1)));
      // The same call without Origin goes the direct way, and is answered.
      const answered = await send(app!.url, 'POST', session, echoCall(2));
      expect(answered.status).toBe(200);
      expect(answered.body).toContain('"hello":"world"');
    });

    it("refuses another site's GET and DELETE, and the session stays open", async () => {
      const session = await openSession(app!.url);

      expectRefused(await send(app!.url, 'GET', { ...session, origin: EVIL }));
      expectRefused(await send(app!.url, 'DELETE', { ...session, origin: EVIL }));

      expect(app!.app.get(McpSessions).size).toBe(1);
      expect((await send(app!.url, 'POST', session, echoCall(3))).status).toBe(200);
    });

    it.each(['http://localhost:6274', 'http://127.0.0.1:5173', 'https://[::1]:8443'])(
      'serves a loopback page (%s) on every method',
      async (origin) => {
        const opened = await send(app!.url, 'POST', { ...PLAIN, origin }, INITIALIZE);
        expect(opened.status).toBe(200);
        const session = {
          ...PLAIN,
          origin,
          'mcp-session-id': String(opened.headers['mcp-session-id']),
          'mcp-protocol-version': PROTOCOL_VERSION,
        };
        await send(app!.url, 'POST', session, { jsonrpc: '2.0', method: 'notifications/initialized' });

        expect((await send(app!.url, 'POST', session, echoCall(1))).status).toBe(200);
        expect((await send(app!.url, 'GET', session)).status).toBe(200);
        expect((await send(app!.url, 'DELETE', session)).status).toBe(200);
      },
    );

    it('serves a request without Origin, whatever its Host', async () => {
      const answer = await send(app!.url, 'POST', { ...PLAIN, host: 'bulkhead.internal:8080' }, INITIALIZE);

      expect(answer.status).toBe(200);
    });
  });

  describe('with mcp.allowedOrigins and mcp.allowedHosts', () => {
    beforeEach(async () => {
      app = await createTestApp(
        {
          ...ANONYMOUS,
          mcp: { allowedOrigins: ['https://app.example.com'], allowedHosts: ['bulkhead.example.com'] },
        },
        { platform },
      );
    });

    it('serves a listed origin, and the service’s own page on a listed host', async () => {
      const listed = await send(app!.url, 'POST', { ...PLAIN, origin: 'https://app.example.com' }, INITIALIZE);
      const own = await send(
        app!.url,
        'POST',
        { ...PLAIN, host: 'bulkhead.example.com', origin: 'https://bulkhead.example.com' },
        INITIALIZE,
      );

      expect(listed.status).toBe(200);
      expect(own.status).toBe(200);
    });

    it('refuses a Host the service is not reached by, with or without Origin', async () => {
      expectRefused(await send(app!.url, 'POST', { ...PLAIN, host: 'evil.example.com' }, INITIALIZE));
      expectRefused(await send(app!.url, 'POST', { ...PLAIN, host: 'evil.example.com', origin: EVIL }, INITIALIZE));
    });
  });
});
