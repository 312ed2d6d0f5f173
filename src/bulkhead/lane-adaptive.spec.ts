import { LazyAbortController, ResilienceError, seededRandom, sleep } from '../common';
import { FakeClock, settle } from '../common/fake-clock';
import { deferred } from '../../test/support/deferred';
import { type AdaptiveLimitSettings, createAdaptiveLimit } from './adaptive';
import { Lane } from './lane';
import type { LaneWork } from './lane.types';

function adaptiveLane(clock: FakeClock, settings: AdaptiveLimitSettings, concurrency: number, queueCapacity = 0): Lane {
  const adaptive = createAdaptiveLimit('tools', settings, concurrency, seededRandom(7));
  return new Lane({ name: 'tools', clock, concurrency, queueCapacity, adaptive });
}

/**
 * `callers` callers, each calling again as soon as it is answered, whose calls take
 * `latencyMs()` of virtual time, for `ms` of it.
 */
async function closedLoop(
  clock: FakeClock,
  lane: Lane,
  callers: number,
  latencyMs: () => number,
  ms: number,
): Promise<void> {
  const until = clock.now() + ms;
  const caller = async () => {
    while (clock.now() < until) {
      const run = lane.run(() => sleep(clock, latencyMs()));
      if (typeof run === 'string') await sleep(clock, 10);
      else await run;
    }
  };
  const all = Promise.all(Array.from({ length: callers }, caller));
  while (clock.now() < until) await clock.advanceAsync(10);
  await clock.advanceAsync(10 * latencyMs());
  await all;
}

describe('an adaptive lane', () => {
  it('lowers its limit when its dependency slows five-fold, and raises it again once it is fast', async () => {
    const clock = new FakeClock();
    const lane = adaptiveLane(clock, { algorithm: 'gradient2', min: 2, max: 40 }, 20, 40);
    let latencyMs = 100;
    await closedLoop(clock, lane, 40, () => latencyMs, 5_000);
    const steady = lane.currentLimit;
    expect(steady).toBe(40);

    latencyMs = 500;
    await closedLoop(clock, lane, 40, () => latencyMs, 2_000);
    const slowed = lane.currentLimit;
    expect(slowed).toBeLessThanOrEqual(steady / 3);
    // The queue's bound follows: 40 waiting at 20 running, so twice the limit.
    expect(lane.currentQueueLimit).toBe(slowed * 2);
    expect(lane.snapshot()).toMatchObject({
      limit: slowed,
      queueLimit: slowed * 2,
      concurrency: 20,
      queueCapacity: 40,
    });

    latencyMs = 100;
    await closedLoop(clock, lane, 40, () => latencyMs, 3_000);
    expect(lane.currentLimit).toBe(40);
  });

  it('cuts its limit on timeouts and learns nothing from other failures or from callers who left', async () => {
    const clock = new FakeClock();
    const lane = adaptiveLane(clock, { algorithm: 'aimd', min: 1, max: 10, backoffRatio: 0.5 }, 8);
    const end = async (settle_: (gate: ReturnType<typeof deferred<string>>) => void, abort?: LazyAbortController) => {
      const gate = deferred<string>();
      const run = lane.run(() => gate.promise, { abort });
      if (typeof run === 'string') throw new Error(run);
      run.catch(() => undefined);
      settle_(gate);
      await settle();
    };

    await end((gate) => gate.reject(new ResilienceError('transient', 'upstream 503')));
    expect(lane.currentLimit).toBe(8);
    const leaving = new LazyAbortController();
    await end((gate) => {
      leaving.abort(new Error('caller left'));
      gate.reject(new ResilienceError('timeout', 'timed out'));
    }, leaving);
    expect(lane.currentLimit).toBe(8);
    await end((gate) => gate.reject(new ResilienceError('timeout', 'timed out')));
    expect(lane.currentLimit).toBe(4);
  });

  it("reads a work's own limit signal where its start settles otherwise than its call", async () => {
    const clock = new FakeClock();
    const lane = adaptiveLane(clock, { algorithm: 'aimd', min: 1, max: 10, backoffRatio: 0.5 }, 8);
    const work: LaneWork = {
      // Settles fine once its handler is done; the call itself timed out.
      start: () => Promise.resolve(),
      refuse: () => undefined,
      limitSignal: () => 'drop',
    };
    expect(lane.admit(work)).toBeUndefined();
    await settle();
    expect(lane.currentLimit).toBe(4);
  });

  it('admits no call past a lowered limit until enough running calls end, and drops none it accepted', async () => {
    const clock = new FakeClock();
    const lane = adaptiveLane(clock, { algorithm: 'aimd', min: 1, max: 10, backoffRatio: 0.5 }, 4, 4);
    const gates = Array.from({ length: 4 }, () => deferred<string>());
    const running = gates.map((gate) => lane.run(() => gate.promise) as Promise<string>);
    const waiting = [lane.run(() => 'w1') as Promise<string>, lane.run(() => 'w2') as Promise<string>];
    expect(lane.snapshot()).toMatchObject({ active: 4, waiting: 2 });

    gates[0]!.reject(new ResilienceError('timeout', 'timed out'));
    await running[0]!.catch(() => undefined);
    await settle();
    // Limit 2, queue bound 2: three still run, so neither waiting call starts, and both stay.
    expect(lane.snapshot()).toMatchObject({ active: 3, waiting: 2, limit: 2, queueLimit: 2 });
    expect(lane.run(() => 'refused')).toBe('queue_full');

    gates[1]!.resolve('ok');
    gates[2]!.resolve('ok');
    await settle();
    await settle();
    expect(lane.snapshot()).toMatchObject({ waiting: 0 });
    await expect(Promise.all(waiting)).resolves.toEqual(['w1', 'w2']);
    gates[3]!.resolve('ok');
    await Promise.all(running.slice(1));
  });

  it('serves waiting tenants in turn at whatever limit it has', async () => {
    const clock = new FakeClock();
    const lane = adaptiveLane(clock, { algorithm: 'aimd', min: 1, max: 1 }, 1, 10);
    const order: string[] = [];
    const first = deferred<string>();
    const blocking = lane.run(() => first.promise) as Promise<string>;
    const calls = ['a', 'a', 'a', 'b', 'c'].map(
      (tenant) => lane.run(() => order.push(tenant), { tenant }) as Promise<number>,
    );
    first.resolve('ok');
    await blocking;
    await Promise.all(calls);
    expect(order).toEqual(['a', 'b', 'c', 'a', 'a']);
  });
});
