import { MemoryBudgetStore } from '../../budget';
import { Breaker } from '../../circuit-breaker';
import { LazyAbortController, type Random, ResilienceError, seededRandom } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import type { FakeStepConfig } from '../llm.options';
import { MemoryRateLimitStore, RateLimiter } from '../../rate-limit';
import { track } from '../../../test/support/deferred';
import {
  type TestRouteOptions,
  testRoute,
  type TestTarget,
  testTarget,
  routingInVirtualTime,
  specPool,
} from '../../../test/support/llm-routes';
import { admittedAccount, dailyBudgetGate, OUTPUT_TOKENS as OUTPUT_CAP } from '../../../test/support/llm-accounting';
import type { ChatRequest } from '../chat.types';
import type { FailoverCall, FailoverProgress } from './attempt-race';
import { serveWithFailover } from './failover';
import type { LlmRoute, LlmTarget } from './llm-route';
import type { CommittedStream } from './provider-attempt';
import { LATENCY_STALE_MS } from './target-load';

// Load-aware target choice through serveWithFailover, in virtual time: the route and the fake
// providers run on one FakeClock, opossum's timers on jest's fake timers. The targets are
// unpriced and the tenant has no token limit, so any number of requests may run.

const SEED = 7;
const REQUEST: ChatRequest = { model: 'chat', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 500 };
const TEXT = 'x'.repeat(16) + 'y'.repeat(16) + 'z'.repeat(16);

const routing = routingInVirtualTime();
let clock: FakeClock;
let breakers: Breaker[];
let random: Random;
const pool = specPool(64);

beforeEach(() => {
  ({ clock, breakers } = routing);
  random = seededRandom(SEED);
});

function target(model: string, script: FakeStepConfig[], options: { priority?: number; weight?: number } = {}) {
  return testTarget(clock, breakers, model, script, { ...options, price: undefined });
}

function route(targets: TestTarget[], options: TestRouteOptions = {}): LlmRoute {
  return testRoute(targets, OUTPUT_CAP, { maxAttempts: 1, ...options });
}

function serve(subject: LlmRoute, options: { deliver?: FailoverCall['deliver']; abort?: LazyAbortController } = {}) {
  const abort = options.abort ?? new LazyAbortController();
  const progress: FailoverProgress = { attempts: 0, failovers: 0, tried: [], hedges: [], choices: [] };
  const store = new MemoryBudgetStore(clock);
  const limiter = new RateLimiter(new MemoryRateLimitStore(clock), {
    rateLimits: { tenants: {}, failMode: 'closed', enforce: true },
  });
  const account = admittedAccount('acme', dailyBudgetGate(store, clock), limiter, clock);
  const promise = serveWithFailover(clock, random, {
    route: subject,
    request: REQUEST,
    pool,
    abort,
    account,
    progress,
    deliver: options.deliver,
  });
  return { outcome: track(promise), progress, abort };
}

/** Serves `count` requests one after the other, each to its end; returns who served each. */
async function serveInTurn(subject: LlmRoute, count: number, stepMs = 1_000): Promise<LlmTarget[]> {
  const served: LlmTarget[] = [];
  for (let index = 0; index < count; index++) {
    const call = serve(subject);
    await clock.advanceAsync(stepMs);
    expect(call.outcome.state).toBe('fulfilled');
    served.push(call.outcome.value!.target);
  }
  return served;
}

function share(served: LlmTarget[], which: LlmTarget): number {
  return served.filter((target) => target === which).length / served.length;
}

const answer = (delayMs = 0): FakeStepConfig => ({ text: 'ok', delayMs });

/** A client that reads each stream it is given to its end. */
async function readAll({ stream }: CommittedStream): Promise<void> {
  while (await stream.next(30_000));
}

describe('target choice: ties', () => {
  it('least-busy with equal in-flight counts picks each of two idle targets about half the time, not always the first', async () => {
    const a = target('a', [answer()]);
    const b = target('b', [answer()]);
    const served = await serveInTurn(route([a, b], { strategy: 'least-busy' }), 400);
    expect(share(served, a)).toBeGreaterThan(0.4);
    expect(share(served, a)).toBeLessThan(0.6);
  });

  it('lowest-latency with equal averages picks each about half the time', async () => {
    const a = target('a', [answer(100)]);
    const b = target('b', [answer(100)]);
    const served = await serveInTurn(route([a, b], { strategy: 'lowest-latency' }), 400);
    expect(share(served, a)).toBeGreaterThan(0.4);
    expect(share(served, a)).toBeLessThan(0.6);
  });

  it('an ordered route of one group draws no random number to choose', async () => {
    const a = target('a', [answer()]);
    const b = target('b', [answer()]);
    random = jest.fn(() => 0.5);
    const served = await serveInTurn(route([a, b]), 5);
    expect(served).toEqual([a, a, a, a, a]);
    expect(random).not.toHaveBeenCalled();
  });
});

describe('target choice: weighted', () => {
  it('sends each target its share of the weights', async () => {
    const heavy = target('heavy', [answer()], { weight: 3 });
    const light = target('light', [answer()], { weight: 1 });
    const served = await serveInTurn(route([heavy, light], { strategy: 'weighted' }), 400);
    expect(share(served, heavy)).toBeGreaterThan(0.68);
    expect(share(served, heavy)).toBeLessThan(0.82);
  });
});

describe('target choice: least-busy', () => {
  it('sends concurrent requests to the target with the fewest attempts in flight', async () => {
    const a = target('a', [answer(1_000)]);
    const b = target('b', [answer(1_000)]);
    const subject = route([a, b], { strategy: 'least-busy' });
    const calls = [serve(subject), serve(subject), serve(subject), serve(subject)];
    await clock.advanceAsync(0);
    expect([a.load.inFlight, b.load.inFlight]).toEqual([2, 2]);
    await clock.advanceAsync(1_000);
    expect(calls.map((call) => call.outcome.state)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(a.provider.calls).toHaveLength(2);
    expect(b.provider.calls).toHaveLength(2);
    expect(calls[0].progress.choices.map(({ reason }) => reason)).toEqual(['least_busy']);
  });

  it('spreads load by speed: the faster target, freed sooner, takes more of a steady stream', async () => {
    const fast = target('fast', [answer(100)]);
    const slow = target('slow', [answer(300)]);
    const subject = route([fast, slow], { strategy: 'least-busy' });
    const calls = [];
    for (let tick = 0; tick < 300; tick++) {
      calls.push(serve(subject));
      await clock.advanceAsync(50);
    }
    await clock.advanceAsync(1_000);
    expect(calls.every((call) => call.outcome.state === 'fulfilled')).toBe(true);
    expect(fast.provider.calls.length).toBeGreaterThan(slow.provider.calls.length * 1.5);
    expect([fast.load.inFlight, slow.load.inFlight]).toEqual([0, 0]);
  });
});

describe('target choice: lowest-latency', () => {
  it('tries a target with no sample first, then keeps to the faster one', async () => {
    const slow = target('slow', [answer(300)]);
    const fast = target('fast', [answer(100)]);
    const subject = route([slow, fast], { strategy: 'lowest-latency' });
    const first = serve(subject);
    await clock.advanceAsync(1_000);
    const second = serve(subject);
    await clock.advanceAsync(1_000);
    // Each was tried once, for its sample, whichever came first.
    expect([first.outcome.value!.target, second.outcome.value!.target].sort(byLabel)).toEqual([fast, slow]);
    expect(first.progress.choices[0].reason).toBe('no_latency_sample');
    expect(second.progress.choices[0].reason).toBe('no_latency_sample');

    const served = await serveInTurn(subject, 20);
    expect(served.every((which) => which === fast)).toBe(true);
  });

  it('tries a target again once its sample is stale, so it can show it has recovered', async () => {
    const slow = target('slow', [answer(300)]);
    const fast = target('fast', [answer(100)]);
    const subject = route([slow, fast], { strategy: 'lowest-latency' });
    await serveInTurn(subject, 4);
    const slowCalls = slow.provider.calls.length;
    await clock.advanceAsync(LATENCY_STALE_MS - 10_000);
    await serveInTurn(subject, 1); // fast's sample is fresh again; slow's is not yet stale
    expect(slow.provider.calls).toHaveLength(slowCalls);
    await clock.advanceAsync(10_000);
    const again = serve(subject);
    await clock.advanceAsync(1_000);
    expect(again.outcome.value?.target).toBe(slow);
    expect(again.progress.choices[0].reason).toBe('no_latency_sample');
  });

  it('counts a timed-out attempt as its whole timeout, so the route turns away from the target', async () => {
    const sick = target('sick', [{ status: 503 }, answer(100)]);
    const well = target('well', [answer(200)]);
    const subject = route([sick, well], { strategy: 'lowest-latency' });
    const served = await serveInTurn(subject, 10);
    // sick's failure is a 30 s sample: after both were tried, every request goes to well.
    expect(served.slice(2).every((which) => which === well)).toBe(true);
  });

  it('measures a stream by its first content', async () => {
    const quickStart = target('quick', [{ text: TEXT, delayMs: 50, chunkDelayMs: 500 }]);
    const slowStart = target('late', [{ text: TEXT, delayMs: 200, chunkDelayMs: 10 }]);
    const subject = route([quickStart, slowStart], { strategy: 'lowest-latency' });
    for (let index = 0; index < 6; index++) {
      serve(subject, { deliver: readAll });
      await clock.advanceAsync(5_000);
    }
    expect(quickStart.load.latencyMs('first_token', clock.now())).toBe(50);
    expect(slowStart.load.latencyMs('first_token', clock.now())).toBe(200);
    expect(quickStart.provider.calls.length).toBe(5);
  });
});

describe('target choice: priority groups', () => {
  it('tries every member of a group, by the strategy, before the next group', async () => {
    const a = target('a', [{ status: 400 }], { priority: 0 });
    const backup = target('backup', [answer()], { priority: 1 });
    const b = target('b', [{ status: 400 }], { priority: 0 });
    const call = serve(route([a, backup, b], { strategy: 'least-busy' }));
    await clock.advanceAsync(0);
    expect(call.outcome.value?.target).toBe(backup);
    const order = call.progress.tried.map(({ target: which }) => which);
    expect(order.slice(0, 2).sort(byLabel)).toEqual([a, b]);
    expect(order[2]).toBe(backup);
    expect(call.progress.failovers).toBe(2);
  });

  it('serves from the lowest group and never reaches the next when it answers', async () => {
    const backup = target('backup', [answer()], { priority: 5 });
    const main = target('main', [answer()], { priority: 1 });
    const served = await serveInTurn(route([backup, main]), 3);
    expect(served).toEqual([main, main, main]);
    expect(backup.provider.calls).toHaveLength(0);
  });

  it('fails over inside the group to the member least busy at that moment', async () => {
    const a = target('a', [answer(5_000)]);
    const b = target('b', [{ status: 503, delayMs: 1_000 }]);
    const c = target('c', [answer(100)]);
    const subject = route([a, b, c], { strategy: 'least-busy' });
    // Three requests take one member each.
    const calls = [serve(subject), serve(subject), serve(subject)];
    await clock.advanceAsync(0);
    expect([a.load.inFlight, b.load.inFlight, c.load.inFlight]).toEqual([1, 1, 1]);
    await clock.advanceAsync(100);
    // c answered; b's request fails at 1 000 ms with a (1 in flight) and c (idle) left: c.
    await clock.advanceAsync(900);
    const failedOver = calls.find((call) => call.progress.failovers === 1)!;
    await clock.advanceAsync(100);
    expect(failedOver.outcome.value?.target).toBe(c);
    await clock.advanceAsync(5_000);
  });
});

describe('target choice: hedges', () => {
  it('hedges to another member of the group, not the next group', async () => {
    const a = target('a', [answer(5_000)], { priority: 0 });
    const backup = target('backup', [answer()], { priority: 1 });
    const b = target('b', [answer(5_000), answer()], { priority: 0 });
    // Config order puts backup right after a; today's rule would have hedged there.
    const subject = route([a, backup, b], { hedgeAfterMs: 300 });
    const call = serve(subject);
    await clock.advanceAsync(300);
    expect(b.provider.calls).toHaveLength(1);
    expect(backup.provider.calls).toHaveLength(0);
    await clock.advanceAsync(5_000);
    expect(call.outcome.state).toBe('fulfilled');
  });

  it('hedges to the next group when the group has no other member', async () => {
    const a = target('a', [answer(5_000)], { priority: 0 });
    const backup = target('backup', [answer()], { priority: 1 });
    const call = serve(route([a, backup], { hedgeAfterMs: 300, strategy: 'least-busy' }));
    await clock.advanceAsync(300);
    expect(call.outcome.value).toMatchObject({ target: backup, hedged: true });
  });
});

describe('target choice: in-flight counts', () => {
  it('never drift: answered, failed, retried, hedged losers, stopped calls, cut and delivered streams all end at zero', async () => {
    const a = target('a', [
      answer(400),
      // 500s: a 429 or 503 would keep hedges off the target for a while.
      { status: 500 },
      { text: TEXT, cutAfterChunks: 1 },
      answer(50),
      { text: TEXT, chunkDelayMs: 100 },
      { status: 500, delayMs: 200 },
      answer(450),
    ]);
    const b = target('b', [answer(700), { text: TEXT, cutAfterChunks: 0 }, answer(20), { status: 502 }, answer(350)]);
    const subject = route([a, b], { strategy: 'least-busy', hedgeAfterMs: 300, maxAttempts: 2 });
    const calls = [];
    for (let index = 0; index < 40; index++) {
      const streamed = index % 3 === 0;
      const call = serve(subject, streamed ? { deliver: readAll } : {});
      calls.push(call);
      if (index % 7 === 0) {
        const { abort } = call;
        clock.setTimer(() => abort.abort(new ResilienceError('stopped', 'the client left')), 150);
      }
      await clock.advanceAsync(37);
      expect(a.load.inFlight + b.load.inFlight).toBeGreaterThanOrEqual(0);
    }
    await clock.advanceAsync(120_000);
    expect(calls.every((call) => call.outcome.state !== 'pending')).toBe(true);
    expect(calls.some((call) => call.progress.hedges.length > 0)).toBe(true);
    expect(calls.some((call) => call.outcome.state === 'rejected')).toBe(true);
    expect([a.load.inFlight, b.load.inFlight]).toEqual([0, 0]);
  });
});

function byLabel(x: LlmTarget, y: LlmTarget): number {
  return x.label.localeCompare(y.label);
}
