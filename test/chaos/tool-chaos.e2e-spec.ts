import { seededRandom } from '../../src/common';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { track } from '../support/deferred';
import { expectEnvelope } from '../support/envelope';
import { eventually } from '../support/eventually';
import { invoke, type Response, send } from '../support/http-client';
import { parsePromText, sampleValue, samplesOf } from '../support/prom-text';
import { eventOf, getEvents, getLanes } from '../support/service-reads';
import { json, Upstream } from '../support/upstream';

/** The environment's consent: the config file's and BulkheadModule's own validation both ask. */
const ALLOW = { BULKHEAD_ALLOW_CHAOS: 'true' };

/**
 * Issue 15, item 5: chaos per tool, on the injected clock and random source. Each test rehearses
 * a dependency failing and watches the lane, the breaker and retries meet it as they would the
 * real failure; the upstream, when there is one, is healthy all along and must see nothing.
 */
describe('chaos injected into tool attempts, over HTTP in virtual time', () => {
  let clock: FakeClock;
  let upstream: Upstream | undefined;
  let current: TestApp | undefined;

  beforeEach(() => {
    clock = new FakeClock();
    process.env.BULKHEAD_ALLOW_CHAOS = 'true';
  });

  afterEach(async () => {
    await upstream?.close();
    upstream = undefined;
    await closeOnFakeClock(current, clock);
    current = undefined;
    delete process.env.BULKHEAD_ALLOW_CHAOS;
  });

  async function service(tools: Record<string, unknown>, enabled = true): Promise<TestApp> {
    current = await createTestApp(
      { lanes: { main: { concurrency: 4, queueCapacity: 4 } }, chaos: { enabled }, tools },
      { clock, random: seededRandom(15), env: ALLOW },
    );
    return current;
  }

  /** A healthy upstream: whatever reaches it is answered 200. */
  async function healthyUpstream(): Promise<Upstream> {
    upstream = await Upstream.start(json(200, { ok: true }));
    return upstream;
  }

  /**
   * The answer to `pending`, firing the clock's timers as they fall due without ever moving its
   * time: retries here wait 0 ms, which on a FakeClock is a timer due now.
   */
  async function withoutMovingTime(pending: Promise<Response>): Promise<Response> {
    const answer = track(pending);
    while (answer.state === 'pending') await clock.advanceAsync(0);
    return pending;
  }

  async function prom(app: TestApp) {
    return parsePromText((await send('GET', `${app.url}/metrics`)).body as string);
  }

  async function injected(app: TestApp, target: string, kind: string): Promise<number | undefined> {
    return sampleValue(await prom(app), 'bulkhead_chaos_injected_total', { target, kind });
  }

  describe('a tool whose every attempt fails transient', () => {
    const FLAKY_RETRY = { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0, budget: { minRetries: 1000 } };
    const FLAKY_BREAKER = { volumeThreshold: 5, errorThresholdPercentage: 50, resetTimeoutMs: 30_000 };

    function flaky(url: string) {
      return {
        flaky: {
          lane: 'main',
          kind: 'http',
          url,
          timeoutMs: 5_000,
          retry: FLAKY_RETRY,
          breaker: FLAKY_BREAKER,
          chaos: { faultRate: 1, faultKind: 'transient' },
        },
      };
    }

    it('is retried, then its breaker opens, and its healthy upstream never sees a request', async () => {
      const up = await healthyUpstream();
      const app = await service(flaky(up.url('/')));

      const first = await withoutMovingTime(invoke(app.url, 'flaky', {}, { 'x-call-id': 'chaos-1' }));
      const error = expectEnvelope(first, 502, 'transient');
      expect(error.attempts).toBe(3);
      expect(error.message).toBe("upstream of tool 'flaky' answered HTTP 503 (injected by chaos)");

      // Two more failures make five of five in the window: it opens between the attempts.
      const second = await withoutMovingTime(invoke(app.url, 'flaky', {}, { 'x-call-id': 'chaos-2' }));
      expect(expectEnvelope(second, 503, 'circuit_open').attempts).toBe(2);

      const third = await invoke(app.url, 'flaky', {}, { 'x-call-id': 'chaos-3' });
      expect(expectEnvelope(third, 503, 'circuit_open')).toMatchObject({ attempts: 0, retryAfterMs: 30_000 });

      expect(up.requests).toHaveLength(0);
      const circuits = (await send('GET', `${app.url}/v1/circuits`)).body.circuits;
      expect(circuits.flaky).toMatchObject({ state: 'open', failures: 5, successes: 0 });
      const metrics = await prom(app);
      expect(sampleValue(metrics, 'bulkhead_chaos_injected_total', { target: 'flaky', kind: 'transient' })).toBe(5);
      expect(sampleValue(metrics, 'bulkhead_retries_total', { tool: 'flaky' })).toBe(3);
      expect(
        sampleValue(metrics, 'bulkhead_calls_total', { tool: 'flaky', outcome: 'transient', transport: 'http' }),
      ).toBe(1);
      expect(
        sampleValue(metrics, 'bulkhead_calls_total', { tool: 'flaky', outcome: 'circuit_open', transport: 'http' }),
      ).toBe(2);
    });

    it('marks each call’s ledger line with what was injected into its attempts, and only those calls', async () => {
      const up = await healthyUpstream();
      const app = await service(flaky(up.url('/')));
      await withoutMovingTime(invoke(app.url, 'flaky', {}, { 'x-call-id': 'chaos-1' }));
      await withoutMovingTime(invoke(app.url, 'flaky', {}, { 'x-call-id': 'chaos-2' }));
      await invoke(app.url, 'flaky', {}, { 'x-call-id': 'chaos-3' });

      const events = await getEvents(app.url);

      expect(events.find((event) => event.callId === 'chaos-1')).toMatchObject({
        toolId: 'flaky',
        status: 'transient',
        chaos: ['transient', 'transient', 'transient'],
      });
      expect(events.find((event) => event.callId === 'chaos-2')).toMatchObject({
        status: 'circuit_open',
        chaos: ['transient', 'transient'],
      });
      const refused = events.find((event) => event.callId === 'chaos-3');
      expect(refused?.status).toBe('circuit_open');
      expect(refused).not.toHaveProperty('chaos');
      expect(events.find((event) => event.status === 'breaker_open')).not.toHaveProperty('chaos');
    });

    it('injects nothing while chaos.enabled is false: the settings are inert', async () => {
      const up = await healthyUpstream();
      const app = await service(flaky(up.url('/')), false);

      const answer = await invoke(app.url, 'flaky', { n: 1 }, { 'x-call-id': 'calm-1' });

      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ result: { ok: true }, attempts: 1 });
      expect(up.requests).toHaveLength(1);
      expect(samplesOf(await prom(app), 'bulkhead_chaos_injected_total')).toEqual([]);
      expect(await eventOf(app.url, 'calm-1')).not.toHaveProperty('chaos');
    });
  });

  describe('latency', () => {
    /** Builtin echo tools, one attempt each, with a 1 s attempt timeout and `latencyMs` on every attempt. */
    function delayed(latencyMs: number) {
      return {
        delayed: {
          lane: 'main',
          kind: 'builtin',
          builtin: 'echo',
          timeoutMs: 1_000,
          retry: { maxAttempts: 1 },
          chaos: { latencyRate: 1, latencyMs },
        },
      };
    }

    /** Waits until the call holds its lane slot: its attempt started and the delay is on the clock. */
    async function untilRunning(app: TestApp): Promise<void> {
      await eventually(async () => expect((await getLanes(app.url)).main.active).toBe(1));
    }

    it('delays the attempt by latencyMs of the clock, in its lane slot, and then it answers', async () => {
      const app = await service(delayed(300));
      const pending = invoke(app.url, 'delayed', { q: 'x' }, { 'x-call-id': 'slow-1' });
      await untilRunning(app);

      await clock.advanceAsync(299);
      expect(await eventOf(app.url, 'slow-1')).toBeUndefined();
      expect((await getLanes(app.url)).main.active).toBe(1);

      await clock.advanceAsync(1);
      const answer = await pending;
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ result: { q: 'x' }, attempts: 1, durationMs: 300 });
      expect(await eventOf(app.url, 'slow-1')).toMatchObject({ status: 'ok', chaos: ['latency'] });
      expect(await injected(app, 'delayed', 'latency')).toBe(1);
    });

    it('times the attempt out at its timeout when the latency outlasts it, with the real timeout', async () => {
      const app = await service(delayed(5_000));
      const pending = invoke(app.url, 'delayed', {}, { 'x-call-id': 'slow-2' });
      await untilRunning(app);

      await clock.advanceAsync(999);
      expect(await eventOf(app.url, 'slow-2')).toBeUndefined();

      await clock.advanceAsync(1);
      const error = expectEnvelope(await pending, 504, 'timeout');
      expect(error).toMatchObject({ attempts: 1, message: "tool 'delayed' did not finish within 1000 ms" });
      expect(await eventOf(app.url, 'slow-2')).toMatchObject({ status: 'timeout', chaos: ['latency'] });
      // The timeout ended the wait: the slot is free and nothing of the delay is left on the clock.
      expect((await getLanes(app.url)).main.active).toBe(0);
      expect((await send('GET', `${app.url}/v1/circuits`)).body.circuits.delayed.failures).toBe(1);
    });
  });

  it('hangs a timeout fault until each attempt’s timeout, and retries an idempotent tool', async () => {
    const app = await service({
      stuck: {
        lane: 'main',
        kind: 'builtin',
        builtin: 'echo',
        idempotent: true,
        timeoutMs: 1_000,
        retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
        chaos: { faultRate: 1, faultKind: 'timeout' },
      },
    });
    const answer = track(invoke(app.url, 'stuck', {}, { 'x-call-id': 'stuck-1' }));
    await eventually(async () => expect(await injected(app, 'stuck', 'timeout')).toBe(1));

    await clock.advanceAsync(1_000);
    // The retry's 0 ms wait is a timer due now; the second attempt starts once it fired.
    await eventually(async () => {
      await clock.advanceAsync(0);
      expect(await injected(app, 'stuck', 'timeout')).toBe(2);
    });
    expect(answer.state).toBe('pending');
    await clock.advanceAsync(999);
    expect(await eventOf(app.url, 'stuck-1')).toBeUndefined();
    await clock.advanceAsync(1);

    await eventually(() => expect(answer.state).toBe('fulfilled'));
    expect(expectEnvelope(answer.value!, 504, 'timeout').attempts).toBe(2);
    expect(await eventOf(app.url, 'stuck-1')).toMatchObject({ status: 'timeout', chaos: ['timeout', 'timeout'] });
    expect((await send('GET', `${app.url}/v1/circuits`)).body.circuits.stuck.failures).toBe(2);
  });

  describe('the environment’s consent', () => {
    const document = {
      lanes: { main: { concurrency: 1, queueCapacity: 1 } },
      chaos: { enabled: true },
      tools: { t: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
    };

    it('refuses to start with chaos.enabled: true when the config is validated without it', async () => {
      await expect(createTestApp(document, { clock })).rejects.toThrow(
        'chaos.enabled: is true, which injects failures on purpose: refused unless the environment variable ' +
          'BULKHEAD_ALLOW_CHAOS=true is set',
      );
    });

    it('refuses it in BulkheadModule too, which validates its options in process.env', async () => {
      delete process.env.BULKHEAD_ALLOW_CHAOS;

      await expect(createTestApp(document, { clock, env: ALLOW })).rejects.toThrow(/BULKHEAD_ALLOW_CHAOS=true/);
    });
  });
});
