import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { UpstreamMcpServer } from './upstream-mcp-server';

const ACME = testTenant('acme');
const BOB = testTenant('bob');
const TEN_MINUTES_MS = 600_000;

describe('kind: mcp sessions of a stateful upstream server, per tenant', () => {
  let clock: FakeClock;
  let upstream: UpstreamMcpServer;
  let app: TestApp | undefined;

  /** The app with the upstream's `remember` and `recall` imported as `memory.<name>`. */
  async function start(tool: Record<string, unknown> = {}): Promise<TestApp> {
    upstream = await UpstreamMcpServer.start(0, { memory: true });
    clock = new FakeClock();
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey, BOB.apiKey], adminToken: ADMIN_TOKEN },
        lanes: { main: { concurrency: 4, queueCapacity: 4 } },
        tools: {
          memory: { lane: 'main', kind: 'mcp', url: upstream.url, tools: ['remember', 'recall'], ...tool },
        },
      },
      { clock },
    );
    return app;
  }

  async function remember(tenant: typeof ACME, text: string): Promise<void> {
    const answer = await invoke(app!.url, 'memory.remember', { text }, tenant.headers);
    expect(answer.status).toBe(200);
  }

  async function recall(tenant: typeof ACME): Promise<unknown> {
    const answer = await invoke(app!.url, 'memory.recall', {}, tenant.headers);
    expect(answer.status).toBe(200);
    return answer.body.result;
  }

  /** The session the server listed its tools in: the normal pool's own, which listens. */
  function listingSession(): string | undefined {
    return upstream.seen.find((request) => request.rpc === 'tools/list')?.sessionId;
  }

  afterEach(async () => {
    await closeOnFakeClock(app, clock);
    app = undefined;
    await upstream.close();
  });

  it('keeps one tenant’s upstream state out of another’s sight by default', async () => {
    await start();

    await remember(ACME, 'acme-secret');

    expect(await recall(BOB)).toEqual({ remembered: [] });
    expect(await recall(ACME)).toEqual({ remembered: ['acme-secret'] });
    const [acme, bob, acmeAgain] = upstream.calls.map((call) => call.sessionId);
    expect(new Set([acme, bob, listingSession()]).size).toBe(3);
    expect(acmeAgain).toBe(acme);
  });

  it('shares one session per pool between tenants with session: per-pool', async () => {
    await start({ session: 'per-pool' });

    await remember(ACME, 'acme-note');

    expect(await recall(BOB)).toEqual({ remembered: ['acme-note'] });
    expect(new Set(upstream.calls.map((call) => call.sessionId))).toEqual(new Set([listingSession()]));
  });

  it('gives a contained tenant a session of its own through the isolated pool, never its normal one', async () => {
    await start();
    await remember(ACME, 'before containment');
    await send('PUT', `${app!.url}/v1/admin/containment/acme`, {
      json: { state: 'active', reason: 'test' },
      headers: AS_ADMIN,
    });

    const contained = await invoke(app!.url, 'memory.recall', {}, ACME.headers);

    expect(contained.body).toMatchObject({ pool: 'isolated', result: { remembered: [] } });
    const [normal, isolated] = upstream.calls;
    expect(isolated.sessionId).not.toBe(normal.sessionId);
    expect(isolated.remotePort).not.toBe(normal.remotePort);
  });

  it('ends a tenant’s session idle for 10 minutes with its DELETE, and opens a fresh one on its next call', async () => {
    await start();
    await remember(ACME, 'old');
    const acme = upstream.calls[0].sessionId;

    await clock.advanceAsync(TEN_MINUTES_MS - 1);
    expect(upstream.sessionsEnded).toEqual([]);
    await clock.advanceAsync(60_001);
    await eventually(() => expect(upstream.sessionsEnded).toEqual([acme]));

    expect(await recall(ACME)).toEqual({ remembered: [] });
    expect(upstream.calls[1].sessionId).not.toBe(acme);
    expect(upstream.calls[1].sessionId).not.toBe(listingSession());
  });

  it('ends every tenant’s session and the listening one with their DELETEs at shutdown', async () => {
    await start();
    await recall(ACME);
    await recall(BOB);
    const opened = [...upstream.sessionsOpened];

    // Nothing in flight: the drain ends at once; the clock is left alone, so the DELETEs get their time.
    await app!.close();
    app = undefined;

    expect(new Set(upstream.sessionsEnded)).toEqual(new Set(opened));
    expect(opened).toHaveLength(3);
  });
});
