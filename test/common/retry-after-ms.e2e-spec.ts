import { Controller, Get, Module } from '@nestjs/common';
import OpenAI from 'openai';
import { ResilienceError } from '../../src/common';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, type Response, send } from '../support/http-client';
import { getLanes } from '../support/service-reads';
import { testTenant } from '../support/tenants';
import { closeAll, connectMcp, type McpConnection } from '../mcp/mcp-client';

const ACME = testTenant('acme');

/** A company's own route that refuses with a wait of a fraction of a millisecond past 1234. */
@Controller('test/retry')
class LaterController {
  @Get('later')
  later(): never {
    throw new ResilienceError('queue_full', 'come back later', { retryAfterMs: 1_234.2 });
  }
}

@Module({ controllers: [LaterController] })
class LaterModule {}

/** acme may make one request a minute; one MCP session per tenant; a tool that waits on the clock. */
const CONFIG = {
  auth: { apiKeys: [ACME.apiKey] },
  rateLimits: { tenants: { acme: { rpm: 1 } } },
  lanes: { main: { concurrency: 4, queueCapacity: 4 }, llm: { concurrency: 4, queueCapacity: 4 } },
  tools: {
    echo: { lane: 'main', kind: 'builtin', builtin: 'echo' },
    wait: { lane: 'main', kind: 'builtin', builtin: 'delay', timeoutMs: 600_000 },
  },
  llm: { routes: { chat: { lane: 'llm', targets: [{ provider: 'fake', model: 'offline' }] } } },
  mcp: { maxSessionsPerTenant: 1 },
};

/** The two headers that say when to come back. */
const retryHeaders = (response: Response) => ({
  'retry-after': response.headers['retry-after'],
  'retry-after-ms': response.headers['retry-after-ms'],
});

/**
 * `retry-after-ms` beside every `Retry-After`: OpenAI's and Vercel's SDKs read it first, and
 * ignore a `Retry-After` of 60 s or more (docs/http-contract.md section 6).
 */
describe('retry-after-ms beside every Retry-After', () => {
  let clock: FakeClock;
  let app: TestApp | undefined;
  const connections: McpConnection[] = [];

  beforeEach(async () => {
    clock = new FakeClock();
    app = await createTestApp(CONFIG, { clock, imports: [LaterModule] });
  });

  afterEach(async () => {
    await closeAll(connections);
    await closeOnFakeClock(app, clock);
    app = undefined;
  });

  /** Spends acme's one request of the minute, then lets 250 ms of the clock pass. */
  async function spendTheMinute(): Promise<void> {
    expect((await invoke(app!.url, 'echo', {}, ACME.headers)).status).toBe(200);
    clock.advance(250);
  }

  it('sends the wait in milliseconds on a 429 whose Retry-After is 60, on a tool call', async () => {
    await spendTheMinute();

    const refused = await invoke(app!.url, 'echo', {}, ACME.headers);

    expect(refused.status).toBe(429);
    expect(retryHeaders(refused)).toEqual({ 'retry-after': '60', 'retry-after-ms': '59750' });
    expect(refused.body.error.retryAfterMs).toBe(59_750);
  });

  it('sends it on a 429 of POST /v1/chat/completions', async () => {
    await spendTheMinute();

    const refused = await send('POST', `${app!.url}/v1/chat/completions`, {
      json: { model: 'chat', messages: [{ role: 'user', content: 'hi' }] },
      headers: ACME.headers,
    });

    expect(refused.status).toBe(429);
    expect(retryHeaders(refused)).toEqual({ 'retry-after': '60', 'retry-after-ms': '59750' });
  });

  it('is what the openai SDK reads from the 429 it throws', async () => {
    await spendTheMinute();
    const client = new OpenAI({ apiKey: ACME.key, baseURL: `${app!.url}/v1`, maxRetries: 0 });

    const failure = await client
      .post('/tools/echo/invoke', { body: { arguments: {} } })
      .catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
    expect((failure as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after-ms')).toBe('59750');
  });

  it('sends it on an MCP initialize refused for want of room (Retry-After: 1)', async () => {
    const only = await connectMcp(app!.url, ACME.headers);
    connections.push(only);
    const busy = only.client.callTool({ name: 'wait', arguments: { ms: 1_000 } }).catch((error: unknown) => error);
    await eventually(async () => expect((await getLanes(app!.url)).main.active).toBe(1));

    const refused = await send('POST', `${app!.url}/mcp`, {
      json: {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      },
      headers: { accept: 'application/json, text/event-stream', ...ACME.headers },
    });

    expect({ status: refused.status, kind: refused.body.error.kind }).toEqual({ status: 503, kind: 'queue_full' });
    expect(retryHeaders(refused)).toEqual({ 'retry-after': '1', 'retry-after-ms': '1000' });
    await clock.advanceAsync(1_000);
    expect(await busy).toMatchObject({ structuredContent: { result: { waitedMs: 1_000 } } });
  });

  it('sends whole milliseconds, rounded up, on a company route: the error’s own wait, not the seconds', async () => {
    const refused = await send('GET', `${app!.url}/test/retry/later`);

    expect(refused.status).toBe(503);
    expect(retryHeaders(refused)).toEqual({ 'retry-after': '2', 'retry-after-ms': '1235' });
    expect(refused.body.error.retryAfterMs).toBe(1_234.2);
  });

  it('sends neither where waiting does not help', async () => {
    const refused = await invoke(app!.url, 'nope', {}, ACME.headers);

    expect(refused.status).toBe(404);
    expect(retryHeaders(refused)).toEqual({ 'retry-after': undefined, 'retry-after-ms': undefined });
  });
});
