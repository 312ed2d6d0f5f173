import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import type { Deferred } from '../support/deferred';
import { advanceClocks, installFakeTimers, turnsUntil } from '../support/fake-timers';
import { invoke, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { heldIn, json, Upstream } from '../support/upstream';

// A breaker with a slow-call rate opens on calls that all succeed, but slowly: the upstream on
// loopback holds each request while virtual time moves on (the FakeClock, which measures the
// attempt, and jest's fake timers, which hold the attempt timeout and opossum's reset timer;
// the I/O queues stay real, test/support/fake-timers.ts), then answers 200.

const SLOW_MS = 1_000;
/** Three attempts in the window, more than half slower than a second, open it for 30 s; the probe doubles that. */
const BREAKER = {
  volumeThreshold: 3,
  slowCallDurationMs: SLOW_MS,
  slowCallRatePercentage: 50,
  resetTimeoutMs: 30_000,
  backoffMultiplier: 2,
};

describe('a breaker with a slow-call rate', () => {
  let clock: FakeClock;
  let upstream: Upstream;
  let app: TestApp | undefined;
  const gates: Array<Deferred<void>> = [];

  beforeEach(async () => {
    clock = new FakeClock();
    installFakeTimers(clock);
    gates.length = 0;
    upstream = await Upstream.start(heldIn(gates, json(200, { fine: true })));
    app = await createTestApp(
      {
        lanes: { main: { concurrency: 4, queueCapacity: 4 } },
        tools: {
          fetch: {
            lane: 'main',
            kind: 'http',
            url: upstream.url('/'),
            timeoutMs: 10_000,
            retry: { maxAttempts: 1 },
            breaker: BREAKER,
          },
        },
      },
      { clock },
    );
  });

  afterEach(async () => {
    for (const gate of gates) gate.resolve();
    await upstream.close();
    await closeOnFakeClock(app, clock);
    app = undefined;
    jest.useRealTimers();
  });

  const circuit = async () => ((await send('GET', `${app!.url}/v1/circuits`)).body as any).circuits.fetch;

  /** One call the upstream answers 200 after `ms` of virtual time. */
  async function callTaking(ms: number) {
    const held = gates.length;
    const answer = invoke(app!.url, 'fetch', {});
    await turnsUntil('the call to reach the upstream', () => gates.length === held + 1);
    advanceClocks(clock, ms);
    gates[held].resolve();
    return answer;
  }

  it('opens on calls that succeed but slowly, and states the open time left as Retry-After', async () => {
    expect((await callTaking(200)).status).toBe(200);
    expect((await callTaking(SLOW_MS + 500)).status).toBe(200);
    expect(await circuit()).toMatchObject({ state: 'closed', failures: 0, successes: 2, slowCalls: 1 });
    expect((await callTaking(SLOW_MS + 500)).status).toBe(200);

    expect(await circuit()).toEqual({
      state: 'open',
      failures: 0,
      successes: 3,
      slowCalls: 2,
      tenantsOpen: [],
      openTimeMs: 30_000,
    });
    const refused = await invoke(app!.url, 'fetch', {});
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ kind: 'circuit_open', retryAfterMs: 30_000 });
    expect(refused.headers['retry-after']).toBe('30');
    expect(upstream.requests).toHaveLength(3);

    // Half open, the probe succeeds slowly too: open again, for twice as long.
    advanceClocks(clock, 30_000);
    expect((await callTaking(SLOW_MS + 1)).status).toBe(200);
    expect(await circuit()).toMatchObject({ state: 'open', openTimeMs: 60_000 });
    expect((await invoke(app!.url, 'fetch', {})).body.error).toMatchObject({ retryAfterMs: 60_000 });

    const metrics = parsePromText((await send('GET', `${app!.url}/metrics`)).body as string);
    expect(sampleValue(metrics, 'bulkhead_circuit_slow_calls_total', { breaker: 'fetch' })).toBe(3);
    expect(sampleValue(metrics, 'bulkhead_circuit_probes_total', { breaker: 'fetch', outcome: 'slow' })).toBe(1);
    expect(sampleValue(metrics, 'bulkhead_circuit_state', { breaker: 'fetch' })).toBe(2);

    // A fast probe closes it, and the open time is back to resetTimeoutMs.
    advanceClocks(clock, 60_000);
    expect((await callTaking(10)).status).toBe(200);
    expect(await circuit()).toEqual({
      state: 'closed',
      failures: 0,
      successes: 0,
      slowCalls: 0,
      tenantsOpen: [],
      openTimeMs: 30_000,
    });
  });
});
