import { type IncomingMessage, request as httpRequest } from 'node:http';
import { request } from 'undici';
import { FakeClock } from '../../src/common/fake-clock';
import { McpSessions } from '../../src/mcp';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { getLanes } from '../support/service-reads';

const PROTOCOL_VERSION = '2025-06-18';
const PLAIN = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const CONFIG = {
  auth: { allowAnonymous: true },
  lanes: { render: { concurrency: 1, queueCapacity: 1 } },
  tools: { render: { lane: 'render', kind: 'builtin', builtin: 'delay' } },
};

/** An HTTP exchange as the client sees it arrive: the head, and every body byte after it. */
interface Arriving {
  response: IncomingMessage;
  /** Body bytes received so far. */
  received: () => number;
  /** The whole body, once it ends. */
  ended: Promise<string>;
}

/** Sends a request and resolves at its head, the body left to arrive. */
function headOf(
  url: string,
  method: 'GET' | 'POST',
  headers: Record<string, string>,
  body?: string,
): Promise<Arriving> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      let ended!: (text: string) => void;
      const whole = new Promise<string>((done) => (ended = done));
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => ended(Buffer.concat(chunks).toString()));
      response.on('close', () => ended(Buffer.concat(chunks).toString()));
      resolve({ response, received: () => chunks.reduce((size, chunk) => size + chunk.length, 0), ended: whole });
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Lets whatever already arrived on the socket be read (a few turns of the event loop). */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
}

async function openSession(base: string): Promise<Record<string, string>> {
  const initialize = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'test', version: '1' } },
  };
  const opened = await request(`${base}/mcp`, { method: 'POST', headers: PLAIN, body: JSON.stringify(initialize) });
  await opened.body.text();
  const session = {
    ...PLAIN,
    'mcp-session-id': String(opened.headers['mcp-session-id']),
    'mcp-protocol-version': PROTOCOL_VERSION,
  };
  const body = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await (await request(`${base}/mcp`, { method: 'POST', headers: session, body })).body.text();
  return session;
}

/**
 * Node sends a response's head with its first body byte: an event stream with nothing to say yet
 * (a session's GET stream, a call waiting for its tool) kept its `200 text/event-stream` back
 * until the first keep-alive comment, 15 s later. Its head now goes at once, before any byte of
 * its body, as the SDK's own Node transport sends it.
 */
describe.each(PLATFORMS)('/mcp event streams send their head at once, on %s', (platform) => {
  let clock: FakeClock;
  let app: TestApp | undefined;
  let session: Record<string, string>;

  beforeEach(async () => {
    // The direct path's keep-alive is on this clock, which never moves here: nothing but the head can come.
    clock = new FakeClock();
    app = await createTestApp(CONFIG, { platform, clock });
    session = await openSession(app.url);
  });

  afterEach(async () => {
    await closeOnFakeClock(app, clock);
    app = undefined;
  });

  it('sends the head of a session’s GET stream before any event', async () => {
    const { 'content-type': _json, ...headers } = session;

    // Before the fix this head came with the SDK's first keep-alive, 15 s of real time later.
    const listening = await headOf(`${app!.url}/mcp`, 'GET', headers);
    await settle();

    expect(listening.response.statusCode).toBe(200);
    expect(listening.response.headers['content-type']).toBe('text/event-stream');
    expect(listening.received()).toBe(0);
    listening.response.destroy();
  }, 10_000);

  it.each([
    ['the direct way', true],
    ['through the SDK', false],
  ])(
    'sends the head of a slow tools/call’s answer %s before its result',
    async (_way, direct) => {
      app!.app.get(McpSessions).answersDirectly = direct;
      const call = {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'render', arguments: { ms: 60_000 } },
      };

      const answering = await headOf(`${app!.url}/mcp`, 'POST', session, JSON.stringify(call));
      await settle();

      expect(answering.response.statusCode).toBe(200);
      expect(answering.response.headers['content-type']).toBe('text/event-stream');
      expect(answering.received()).toBe(0);
      await eventually(async () => expect((await getLanes(app!.url)).render).toMatchObject({ active: 1 }));
      await clock.advanceAsync(60_000);
      expect(await answering.ended).toContain('"result"');
    },
    10_000,
  );
});
