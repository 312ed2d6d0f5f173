import { createServiceLogger } from '../../src/logging';
import { FakeClock } from '../../src/common/fake-clock';
import { CapturedLog } from '../support/captured-log';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { expectNothingLeaked } from '../support/envelope';
import { invoke, type Response, send } from '../support/http-client';
import { getEvents } from '../support/service-reads';
import { ADMIN_TOKEN, sha256, testTenant } from '../support/tenants';
import { closeAll, connectMcp, type McpConnection } from '../mcp/mcp-client';

const ACME = testTenant('acme');
const BETA = testTenant('beta');
/** What Anthropic's SDK sends: the key in `x-api-key`, and the API version it speaks. */
const anthropicStyle = (key: string) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' });
const AS_ACME = anthropicStyle(ACME.key);

/** Keys required (no anonymous callers): a tool, an LLM route with an offline target, an admin token. */
const CONFIG = {
  auth: { allowAnonymous: false, apiKeys: [ACME.apiKey, BETA.apiKey], adminToken: ADMIN_TOKEN },
  lanes: { main: { concurrency: 4, queueCapacity: 4 }, llm: { concurrency: 4, queueCapacity: 4 } },
  tools: { echo: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
  llm: { routes: { chat: { lane: 'llm', targets: [{ provider: 'fake', model: 'offline' }] } } },
};

/** A refusal: the status and kind of the envelope (the /v1 routes add OpenAI's fields to it). */
function expectRefused(response: Response, status: number, kind: string): void {
  expect({ status: response.status, kind: response.body?.error?.kind }).toEqual({ status, kind });
}

describe('x-api-key as the API key (what the Anthropic SDK sends)', () => {
  let clock: FakeClock;
  let app: TestApp | undefined;
  let log: CapturedLog;
  const connections: McpConnection[] = [];

  beforeEach(async () => {
    clock = new FakeClock();
    log = new CapturedLog();
    app = await createTestApp(CONFIG, { clock, logger: createServiceLogger({ level: 'debug', destination: log }) });
  });

  afterEach(async () => {
    await closeAll(connections);
    await closeOnFakeClock(app, clock);
    app = undefined;
  });

  it('runs a tool call as the key’s tenant, in the normal pool, and the ledger says so', async () => {
    const response = await invoke(app!.url, 'echo', { n: 1 }, { ...AS_ACME, 'x-call-id': 'acme-1' });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ callId: 'acme-1', pool: 'normal', result: { n: 1 } });
    const events = await getEvents(app!.url, 1000, AS_ACME);
    expect(events.find((event) => event.callId === 'acme-1')).toMatchObject({ tenant: 'acme', status: 'ok' });
    // The ledger is per tenant: beta's key sees none of acme's calls.
    expect(await getEvents(app!.url, 1000, anthropicStyle(BETA.key))).toEqual([]);
  });

  it.each([
    ['GET', '/v1/lanes'],
    ['GET', '/v1/circuits'],
    ['GET', '/v1/events'],
  ])('answers %s %s with the key in x-api-key', async (method, path) => {
    expect((await send(method, `${app!.url}${path}`, { headers: AS_ACME })).status).toBe(200);
  });

  it('serves POST /v1/chat/completions with the key in x-api-key', async () => {
    const response = await send('POST', `${app!.url}/v1/chat/completions`, {
      json: { model: 'chat', messages: [{ role: 'user', content: 'hello there' }] },
      headers: AS_ACME,
    });

    expect(response.status).toBe(200);
    expect(response.body.choices[0].message.content).toBe('hello there');
  });

  it('opens an MCP session and calls a tool with the key in x-api-key', async () => {
    const connection = await connectMcp(app!.url, AS_ACME);
    connections.push(connection);

    const result = await connection.client.callTool({ name: 'echo', arguments: { via: 'mcp' } });

    expect(result.structuredContent).toMatchObject({ pool: 'normal', result: { via: 'mcp' } });
  });

  it('accepts the same key in Authorization and x-api-key', async () => {
    const response = await invoke(app!.url, 'echo', {}, { ...ACME.headers, ...AS_ACME });

    expect(response.status).toBe(200);
    expect(response.body.pool).toBe('normal');
  });

  it('refuses two different keys, even two configured ones, with 401 and runs nothing', async () => {
    const answers = [
      await invoke(app!.url, 'echo', {}, { ...ACME.headers, ...anthropicStyle(BETA.key), 'x-call-id': 'two-keys' }),
      await send('POST', `${app!.url}/v1/chat/completions`, {
        json: { model: 'chat', messages: [{ role: 'user', content: 'hi' }] },
        headers: { ...BETA.headers, ...AS_ACME },
      }),
      await send('POST', `${app!.url}/mcp`, {
        json: { jsonrpc: '2.0', id: 0, method: 'initialize', params: {} },
        headers: { ...ACME.headers, ...anthropicStyle(BETA.key), accept: 'application/json, text/event-stream' },
      }),
    ];

    for (const response of answers) {
      expectRefused(response, 401, 'unauthorized');
      expect(response.body.error.message).toBe('Authorization and x-api-key carry different API keys: send one');
      expectNothingLeaked(response, ACME.key, BETA.key, sha256(ACME.key), sha256(BETA.key));
    }
    expect(await getEvents(app!.url, 1000, AS_ACME)).toEqual([]);
    expect(await getEvents(app!.url, 1000, anthropicStyle(BETA.key))).toEqual([]);
  });

  it.each([
    ['an unknown key', { 'x-api-key': 'sk-ant-not-configured-0123456789' }],
    ['an empty value', { 'x-api-key': '' }],
    ['the key under the Bearer scheme', { 'x-api-key': `Bearer ${ACME.key}` }],
    ['the configured SHA-256 of the key', { 'x-api-key': sha256(ACME.key) }],
    ['a known key beside a malformed Authorization', { ...AS_ACME, authorization: `Basic ${ACME.key}` }],
  ])('refuses %s in x-api-key with 401', async (_case, headers) => {
    const response = await invoke(app!.url, 'echo', {}, headers);

    expectRefused(response, 401, 'unauthorized');
    expectNothingLeaked(response, ACME.key, 'sk-ant-not-configured-0123456789');
  });

  it('never writes a key from x-api-key to the log', async () => {
    await invoke(app!.url, 'echo', {}, AS_ACME);
    await invoke(app!.url, 'echo', {}, { 'x-api-key': 'sk-ant-not-configured-0123456789' });
    await invoke(app!.url, 'echo', {}, { ...ACME.headers, ...anthropicStyle(BETA.key) });

    // Each request has its line (so the log was written), and no key is in any line.
    expect(log.events('call').map(({ tenant, kind }) => ({ tenant, kind }))).toEqual([{ tenant: 'acme', kind: 'ok' }]);
    expect(log.events('request').map((line) => line.kind)).toEqual(['unauthorized', 'unauthorized']);
    for (const secret of [ACME.key, BETA.key, 'sk-ant-not-configured-0123456789']) {
      expect(log.text).not.toContain(secret);
      expect(log.text).not.toContain(sha256(secret));
    }
  });

  describe('admin routes take the admin token as Authorization: Bearer only', () => {
    it('refuses the admin token in x-api-key with 401', async () => {
      const response = await send('GET', `${app!.url}/v1/admin/containment/acme`, {
        headers: anthropicStyle(ADMIN_TOKEN),
      });

      expectRefused(response, 401, 'unauthorized');
      expectNothingLeaked(response, ADMIN_TOKEN);
    });

    it('refuses an API key in x-api-key with 401', async () => {
      const response = await send('GET', `${app!.url}/v1/admin/containment/acme`, { headers: AS_ACME });

      expectRefused(response, 401, 'unauthorized');
    });

    it('still serves the admin token as a bearer, whatever x-api-key says', async () => {
      const response = await send('GET', `${app!.url}/v1/admin/containment/acme`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...AS_ACME },
      });

      expect(response.status).toBe(200);
    });
  });
});
