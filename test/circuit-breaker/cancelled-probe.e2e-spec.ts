import { FakeClock } from '../../src/common/fake-clock';
import { abortableRequest } from '../support/abortable-request';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import type { Deferred } from '../support/deferred';
import { advanceClocks, installFakeTimers, turnsUntil } from '../support/fake-timers';
import { invoke, send } from '../support/http-client';
import { eventOf } from '../support/service-reads';
import { heldIn, json, Upstream } from '../support/upstream';

// A half-open breaker's probe whose client disconnects while the upstream still works ends
// `stopped`: neither a success nor a failure, so the breaker stays half open for everyone and
// the next call is its probe. opossum's open → half-open timer runs on jest's fake timers (the
// I/O queues stay real, so the app serves on loopback); advanceClocks moves it with the FakeClock.

/** Three attempts in the window, more than half failing, open it for 30 s. */
const BREAKER = { volumeThreshold: 3, errorThresholdPercentage: 50, resetTimeoutMs: 30_000 };

describe('a half-open probe whose caller disconnects', () => {
  let clock: FakeClock;
  let upstream: Upstream;
  let app: TestApp | undefined;

  beforeEach(async () => {
    clock = new FakeClock();
    installFakeTimers(clock);
    upstream = await Upstream.start(json(503, { error: 'down' }));
    app = await createTestApp(
      {
        lanes: { main: { concurrency: 4, queueCapacity: 4 } },
        tools: {
          fetch: {
            lane: 'main',
            kind: 'http',
            url: upstream.url('/'),
            timeoutMs: 5_000,
            retry: { maxAttempts: 1 },
            breaker: BREAKER,
          },
        },
      },
      { clock },
    );
  });

  afterEach(async () => {
    await upstream.close();
    await closeOnFakeClock(app, clock);
    app = undefined;
    jest.useRealTimers();
  });

  const circuit = async () => ((await send('GET', `${app!.url}/v1/circuits`)).body as any).circuits.fetch;

  it('leaves the breaker half open, not closed, and the next call probes it', async () => {
    const base = app!.url;
    for (let i = 0; i < 3; i++) expect((await invoke(base, 'fetch', {})).status).toBe(502);
    expect(await circuit()).toMatchObject({ state: 'open' });
    advanceClocks(clock, BREAKER.resetTimeoutMs);
    const halfOpen = await circuit();
    expect(halfOpen.state).toBe('half_open');

    // The anonymous caller's probe reaches the upstream, which works on it; the caller leaves.
    const gates: Array<Deferred<void>> = [];
    upstream.use(heldIn(gates, json(200, { fine: true })));
    const probe = abortableRequest('POST', `${base}/v1/tools/fetch/invoke`, {
      json: { arguments: {} },
      headers: { 'x-call-id': 'probe-gone' },
    });
    await turnsUntil('the probe to reach the upstream', () => gates.length === 1);
    const meanwhile = await invoke(base, 'fetch', {});
    expect(meanwhile.status).toBe(503);
    expect(meanwhile.body.error).toMatchObject({ kind: 'circuit_open' });
    await probe.abort();
    await turnsUntil('the probe call to end', async () => (await eventOf(base, 'probe-gone')) !== undefined);
    await turnsUntil('the upstream to see its request abandoned', () => upstream.abandoned === 1);

    expect(await circuit()).toEqual(halfOpen);

    // The next call is the probe: it reaches the upstream and, answered, closes the breaker.
    upstream.use(json(200, { fine: true }));
    const next = await invoke(base, 'fetch', {});
    expect(next.status).toBe(200);
    expect(upstream.requests).toHaveLength(5);
    expect(await circuit()).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
  });
});
