import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import type { Deferred } from '../support/deferred';
import { advanceClocks, installFakeTimers, turnsUntil } from '../support/fake-timers';
import { invoke, send } from '../support/http-client';
import { testTenant } from '../support/tenants';
import { heldIn, json, Upstream, type UpstreamHandler } from '../support/upstream';
import { FIVE_ATTEMPTS_BREAKER, lookupTool } from '../support/shared-breaker';

// A timeout the caller chose with X-Timeout-Ms, shorter than the tool's own, is the caller's
// outcome: it does not count against the dependency, and such a call cannot be a half-open
// probe (issue 36). Attempt timeouts run on the injected FakeClock and opossum's half-open timer
// on jest's fake timers (the I/O queues stay real); advanceClocks moves both.

const ALPHA = testTenant('alpha');
const BRAVO = testTenant('bravo');
const as = (tenant: { key: string }, headers: Record<string, string> = {}) => ({
  authorization: `Bearer ${tenant.key}`,
  ...headers,
});

describe('a timeout the caller chose', () => {
  let clock: FakeClock;
  let upstream: Upstream;
  let app: TestApp | undefined;
  let gates: Array<Deferred<void>>;

  /** A healthy upstream: it answers every request, but those asking `slow` only once the test lets them. */
  const healthy: UpstreamHandler = (request, response) => {
    const answer = json(200, { ok: true });
    const slow = (JSON.parse(request.body) as { slow?: boolean }).slow === true;
    return slow ? heldIn(gates, answer)(request, response) : answer(request, response);
  };

  beforeEach(async () => {
    clock = new FakeClock();
    installFakeTimers(clock);
    gates = [];
    upstream = await Upstream.start(healthy);
    app = await createTestApp(
      {
        auth: { apiKeys: [ALPHA.apiKey, BRAVO.apiKey] },
        lanes: { main: { concurrency: 4, queueCapacity: 4 } },
        tools: {
          lookup: lookupTool(upstream.url('/lookup')),
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

  const circuit = async () => ((await send('GET', `${app!.url}/v1/circuits`)).body as any).circuits.lookup;

  /** One call of alpha's with `X-Timeout-Ms: 1` that reaches the upstream and runs out of its 1 ms. */
  async function timedOutAfterOneMs() {
    const reached = gates.length;
    const answer = invoke(app!.url, 'lookup', { slow: true }, as(ALPHA, { 'x-timeout-ms': '1' }));
    await turnsUntil('the call to reach the upstream', () => gates.length === reached + 1);
    advanceClocks(clock, 1);
    return answer;
  }

  it('does not count against a healthy tool: eleven 1 ms calls leave its breaker closed, and the other tenant is served', async () => {
    for (let i = 0; i < 11; i++) {
      const answer = await timedOutAfterOneMs();
      expect(answer.status).toBe(504);
      expect(answer.body.error).toMatchObject({ kind: 'timeout' });
    }

    expect(await circuit()).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
    expect((await invoke(app!.url, 'lookup', { q: 1 }, as(BRAVO))).status).toBe(200);
  });

  it('cannot be the half-open probe: refused without reaching the upstream, and a call with the full timeout probes', async () => {
    upstream.use(json(503, { error: 'down' }));
    for (let i = 0; i < 5; i++) expect((await invoke(app!.url, 'lookup', { q: i }, as(BRAVO))).status).toBe(502);
    expect(await circuit()).toMatchObject({ state: 'open' });
    upstream.use(healthy);
    advanceClocks(clock, FIVE_ATTEMPTS_BREAKER.resetTimeoutMs);
    expect(await circuit()).toMatchObject({ state: 'half_open' });
    const requestsBefore = upstream.requests.length;

    const refused = await invoke(app!.url, 'lookup', { slow: true }, as(ALPHA, { 'x-timeout-ms': '1' }));

    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ kind: 'circuit_open' });
    expect(refused.headers['retry-after']).toBe('1');
    expect(upstream.requests).toHaveLength(requestsBefore);
    expect(await circuit()).toMatchObject({ state: 'half_open' });
    expect((await invoke(app!.url, 'lookup', { q: 'probe' }, as(BRAVO))).status).toBe(200);
    expect(await circuit()).toMatchObject({ state: 'closed' });
  });
});
