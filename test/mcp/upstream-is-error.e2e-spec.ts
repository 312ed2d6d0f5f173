import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { testTenant } from '../support/tenants';
import { closeAll, connectMcp, type McpConnection } from './mcp-client';
import { UpstreamMcpServer } from './upstream-mcp-server';

const ACME = testTenant('acme');
/** What the upstream's `fail` tool says, as Bulkhead hands it on. */
const FAILED = "the upstream tool of 'fail' answered an error: the upstream tool broke: disk full";

describe('kind: mcp tools whose upstream answers isError: true', () => {
  let clock: FakeClock;
  let upstream: UpstreamMcpServer;
  let app: TestApp | undefined;
  const connections: McpConnection[] = [];

  /** The app with the upstream's `fail` tool as `fail`, its breaker opening after three failures. */
  async function start(tool: Record<string, unknown> = {}): Promise<TestApp> {
    upstream = await UpstreamMcpServer.start();
    clock = new FakeClock();
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey] },
        lanes: { main: { concurrency: 4, queueCapacity: 4 } },
        tools: {
          fail: {
            lane: 'main',
            kind: 'mcp',
            url: upstream.url,
            tool: 'fail',
            breaker: { volumeThreshold: 3, errorThresholdPercentage: 50 },
            ...tool,
          },
        },
      },
      { clock },
    );
    return app;
  }

  async function circuitOf(tool: string): Promise<Record<string, unknown>> {
    const circuits = await send('GET', `${app!.url}/v1/circuits`, { headers: ACME.headers });
    return circuits.body.circuits[tool];
  }

  afterEach(async () => {
    await closeOnFakeClock(app, clock);
    app = undefined;
    await closeAll(connections);
    await upstream.close();
  });

  it('answers it as the upstream’s failure (502 transient, its text), not retried, and opens the breaker after volumeThreshold', async () => {
    // The default retry settings (3 attempts) would retry any other transient failure.
    await start();

    const failed = [];
    for (let i = 0; i < 3; i++) failed.push(await invoke(app!.url, 'fail', {}, ACME.headers));
    const refused = await invoke(app!.url, 'fail', {}, ACME.headers);

    for (const answer of failed) {
      expect(answer.status).toBe(502);
      expect(answer.body.error).toMatchObject({ kind: 'transient', message: FAILED, attempts: 1 });
    }
    expect(upstream.calls).toHaveLength(3);
    expect(refused.status).toBe(503);
    expect(refused.body.error.kind).toBe('circuit_open');
    expect(await circuitOf('fail')).toMatchObject({ state: 'open' });
  });

  it('hands the upstream’s text to an agent over /mcp as a transient error result', async () => {
    await start();
    const connection = await connectMcp(app!.url, ACME.headers);
    connections.push(connection);

    const result = await connection.client.callTool({ name: 'fail', arguments: {} });

    expect(result).toMatchObject({
      isError: true,
      structuredContent: { error: { kind: 'transient', message: FAILED, attempts: 1 } },
    });
  });

  it('retries it like any transient failure with retryIsError: true', async () => {
    await start({ retryIsError: true, retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 10 } });

    const answering = invoke(app!.url, 'fail', {}, ACME.headers);
    await eventually(async () => {
      await clock.advanceAsync(10);
      expect(upstream.calls).toHaveLength(3);
    });
    const answer = await answering;

    expect(answer.status).toBe(502);
    expect(answer.body.error).toMatchObject({ kind: 'transient', message: FAILED, attempts: 3 });
  });

  it('answers it as the caller’s bad input with isError: bad_input: 400 schema, not retried, breaker closed', async () => {
    await start({ isError: 'bad_input' });

    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await invoke(app!.url, 'fail', {}, ACME.headers));

    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ kind: 'schema', message: FAILED, attempts: 1 });
    }
    expect(upstream.calls).toHaveLength(4);
    expect(await circuitOf('fail')).toMatchObject({ state: 'closed', failures: 0 });
  });
});
