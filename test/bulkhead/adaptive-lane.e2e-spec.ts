import { LaneRegistry } from '../../src/bulkhead';
import { sleep } from '../../src/common';
import { FakeClock, settle } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { invoke, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { getLanes } from '../support/service-reads';
import { testTenant } from '../support/tenants';
import { Upstream } from '../support/upstream';

/** Callers, each calling again as soon as it is answered: more than the lane's starting limit. */
const CALLERS = 16;
/** A tenant with a key: anonymous callers go out through the isolated pool, two requests at a time. */
const AGENT = testTenant('agent');

describe('an adaptive lane over HTTP', () => {
  let clock: FakeClock;
  let upstream: Upstream;
  let service: TestApp | undefined;
  /** The upstream's time per request, in virtual milliseconds. */
  let latencyMs = 100;
  /** Requests the upstream holds on the clock now. */
  let atUpstream = 0;
  /** Callers waiting on the clock after a refusal. */
  let backingOff = 0;

  beforeEach(async () => {
    clock = new FakeClock();
    upstream = await Upstream.start(async (_request, response) => {
      atUpstream++;
      await sleep(clock, latencyMs);
      atUpstream--;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    service = await createTestApp(
      {
        auth: { apiKeys: [AGENT.apiKey] },
        lanes: {
          search: {
            concurrency: 8,
            queueCapacity: 8,
            // queueSize 2: a five-fold slowdown settles the limit at 4 (at 8 with the default 4).
            adaptive: { algorithm: 'gradient2', min: 2, max: CALLERS, queueSize: 2 },
          },
        },
        tools: {
          search: {
            lane: 'search',
            kind: 'http',
            url: upstream.url('/search'),
            timeoutMs: 10_000,
            retry: { maxAttempts: 1 },
          },
        },
      },
      { clock },
    );
  });

  afterEach(async () => {
    await closeOnFakeClock(service, clock);
    service = undefined;
    await upstream.close();
  });

  /**
   * Runs the callers for `ms` of virtual time. Time moves only once every caller is held on the
   * clock (at the upstream, in the lane's queue, or backing off after a refusal), so each call's
   * time in its slot is exactly the upstream's latency, however slow the real I/O is.
   */
  async function load(ms: number): Promise<void> {
    const lanes = service!.app.get(LaneRegistry);
    const lane = lanes.get('search')!;
    const until = clock.now() + ms;
    const caller = async () => {
      while (clock.now() < until) {
        const answer = await invoke(service!.url, 'search', {}, AGENT.headers);
        if (answer.status === 200) continue;
        expect(answer.status).toBe(503);
        backingOff++;
        await sleep(clock, 20);
        backingOff--;
      }
    };
    const callers = Promise.all(Array.from({ length: CALLERS }, caller));
    const held = () => atUpstream + lane.snapshot().waiting + backingOff === CALLERS;
    while (clock.now() < until) {
      for (let turns = 0; !held() && turns < 10_000; turns++) await settle();
      await clock.advanceAsync(10);
    }
    while (atUpstream + lane.snapshot().waiting + backingOff > 0 || lane.snapshot().active > 0) {
      await clock.advanceAsync(10);
    }
    await callers;
  }

  it('lowers its limit when the upstream slows five-fold and raises it again when it recovers, in /v1/lanes and /metrics', async () => {
    const limitOf = async () => (await getLanes(service!.url)).search!;

    await load(1_000);
    const steady = await limitOf();
    expect(steady).toMatchObject({ concurrency: 8, queueCapacity: 8, limit: CALLERS, queueLimit: CALLERS });
    expect(steady.adaptive).toEqual({ algorithm: 'gradient2', min: 2, max: CALLERS });

    latencyMs = 500;
    await load(2_500);
    const slowed = await limitOf();
    expect(slowed.limit).toBeLessThanOrEqual(CALLERS / 3);
    expect(slowed.queueLimit).toBe(slowed.limit);
    const prom = parsePromText((await send('GET', `${service!.url}/metrics`)).body as string);
    expect(sampleValue(prom, 'bulkhead_lane_limit', { lane: 'search', kind: 'concurrency' })).toBe(slowed.limit);
    expect(sampleValue(prom, 'bulkhead_lane_limit', { lane: 'search', kind: 'queue' })).toBe(slowed.queueLimit);

    latencyMs = 100;
    await load(1_500);
    expect((await limitOf()).limit).toBe(CALLERS);
  });
});
