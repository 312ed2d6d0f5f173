import { Breaker, type BreakerSettings } from '../../circuit-breaker';
import { ResilienceError } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import { advanceClocks } from '../../../test/support/fake-timers';
import { routingInVirtualTime } from '../../../test/support/llm-routes';
import { hedgeTarget } from './hedge-target';
import { HedgeAllowance, TargetHealth } from './hedging';
import type { LlmRoute, LlmTarget } from './llm-route';

// The throttling goes by the injected FakeClock; a breaker's open → half-open timer is opossum's
// own setTimeout, held by jest's fake timers (advanceClocks moves both).

const SETTINGS: BreakerSettings = {
  errorThresholdPercentage: 50,
  volumeThreshold: 1,
  resetTimeoutMs: 5_000,
  rollingCountTimeoutMs: 10_000,
};

const routing = routingInVirtualTime();
let clock: FakeClock;
let breakers: Breaker[];

beforeEach(() => {
  ({ clock, breakers } = routing);
});

function target(name: string): LlmTarget {
  const breaker = new Breaker(`llm.test.${name}`, SETTINGS, clock);
  breakers.push(breaker);
  return { label: `fake/${name}`, breaker, health: new TargetHealth() } as unknown as LlmTarget;
}

function route(targets: LlmTarget[]): LlmRoute {
  return { targets } as unknown as LlmRoute;
}

/** Opens a breaker the way traffic does: one counted failure, with a volume threshold of one. */
async function open(which: LlmTarget): Promise<void> {
  await which.breaker.fire(() => Promise.reject(new ResilienceError('transient', 'down'))).catch(() => undefined);
  expect(which.breaker.state).toBe('open');
}

async function halfOpen(which: LlmTarget): Promise<void> {
  await open(which);
  advanceClocks(clock, SETTINGS.resetTimeoutMs);
  expect(which.breaker.state).toBe('half_open');
}

describe('HedgeAllowance', () => {
  it('allows a burst of two hedges back to back, then none', () => {
    const allowance = new HedgeAllowance();

    expect([allowance.take(), allowance.take(), allowance.take()]).toEqual([true, true, false]);
  });

  it('allows one more hedge for every ten requests, not nine', () => {
    const allowance = new HedgeAllowance();
    allowance.take();
    allowance.take();

    for (let request = 0; request < 9; request++) allowance.requested();
    expect(allowance.take()).toBe(false);
    allowance.requested();
    expect(allowance.take()).toBe(true);
    expect(allowance.take()).toBe(false);
  });

  it('saves up no more than the burst however many requests came', () => {
    const allowance = new HedgeAllowance();

    for (let request = 0; request < 1_000; request++) allowance.requested();

    expect([allowance.take(), allowance.take(), allowance.take()]).toEqual([true, true, false]);
  });

  it('lets exactly one request in ten hedge over a long run, once the burst is spent', () => {
    const allowance = new HedgeAllowance();
    allowance.take();
    allowance.take();
    let hedges = 0;

    for (let request = 0; request < 1_000; request++) {
      allowance.requested();
      if (allowance.take()) hedges++;
    }

    expect(hedges).toBe(100);
  });
});

describe('TargetHealth', () => {
  it('takes hedges while its breaker is closed and it has not been throttled', () => {
    const subject = target('a');

    expect(subject.health.hedgeable(clock, subject.breaker)).toBe(true);
  });

  it('takes no hedge for the Retry-After of a 429/529, and takes them again from its end', () => {
    const subject = target('a');

    subject.health.throttled(clock, 2_000);

    clock.advance(1_999);
    expect(subject.health.hedgeable(clock, subject.breaker)).toBe(false);
    clock.advance(1);
    expect(subject.health.hedgeable(clock, subject.breaker)).toBe(true);
  });

  it('takes no hedge for 5 s after a 429/529 without a Retry-After', () => {
    const subject = target('a');

    subject.health.throttled(clock, undefined);

    clock.advance(4_999);
    expect(subject.health.hedgeable(clock, subject.breaker)).toBe(false);
    clock.advance(1);
    expect(subject.health.hedgeable(clock, subject.breaker)).toBe(true);
  });

  it('keeps the later end when a shorter Retry-After comes after a longer one', () => {
    const subject = target('a');

    subject.health.throttled(clock, 10_000);
    clock.advance(1_000);
    subject.health.throttled(clock, 100);

    clock.advance(8_999);
    expect(subject.health.hedgeable(clock, subject.breaker)).toBe(false);
    clock.advance(1);
    expect(subject.health.hedgeable(clock, subject.breaker)).toBe(true);
  });

  it('takes no hedge while its breaker is open', async () => {
    const subject = target('a');

    await open(subject);

    expect(subject.health.hedgeable(clock, subject.breaker)).toBe(false);
  });

  it('takes no hedge while an operator holds its breaker open', () => {
    const subject = target('a');

    subject.breaker.forceOpen();

    expect(subject.health.hedgeable(clock, subject.breaker)).toBe(false);
  });

  it('takes no hedge while its breaker is half open, even with its probe not yet taken', async () => {
    const subject = target('a');

    await halfOpen(subject);

    expect(subject.breaker.refusal()).toBeUndefined();
    expect(subject.health.hedgeable(clock, subject.breaker)).toBe(false);
  });
});

describe('hedgeTarget', () => {
  it('picks the next target after the running one, in the route order', () => {
    const [a, b, c] = [target('a'), target('b'), target('c')];

    expect(hedgeTarget(clock, route([a, b, c]), a, [a])).toBe(b);
    expect(hedgeTarget(clock, route([a, b, c]), b, [b])).toBe(c);
  });

  it('passes over targets already running an attempt of the request', () => {
    const [a, b, c] = [target('a'), target('b'), target('c')];

    expect(hedgeTarget(clock, route([a, b, c]), a, [a, b])).toBe(c);
  });

  it('passes over a throttled target and one with an open breaker', async () => {
    const [a, b, c, d] = [target('a'), target('b'), target('c'), target('d')];
    b.health.throttled(clock, 60_000);
    await open(c);

    expect(hedgeTarget(clock, route([a, b, c, d]), a, [a])).toBe(d);
  });

  it('hedges to the running target itself when it is the only one', () => {
    const only = target('only');

    expect(hedgeTarget(clock, route([only]), only, [only])).toBe(only);
  });

  it('hedges to the running target itself when none after it may take one, never to one before it', () => {
    const [a, b, c] = [target('a'), target('b'), target('c')];
    c.health.throttled(clock, 60_000);

    expect(hedgeTarget(clock, route([a, b, c]), b, [b])).toBe(b);
  });

  it('sends no hedge to the running target itself while a hedge to another one runs', () => {
    const [a, b, c] = [target('a'), target('b'), target('c')];
    c.health.throttled(clock, 60_000);

    expect(hedgeTarget(clock, route([a, b]), a, [a, b])).toBeUndefined();
    expect(hedgeTarget(clock, route([a, b, c]), a, [a, b])).toBeUndefined();
  });

  it('finds none when the running target is half open and the others may not take one', async () => {
    const [a, b] = [target('a'), target('b')];
    await halfOpen(a);
    b.health.throttled(clock, 60_000);

    expect(hedgeTarget(clock, route([a, b]), a, [a])).toBeUndefined();
  });
});

describe('hedgeTarget with a hedge already on the same target', () => {
  it('sends no second hedge to a route’s only target while two attempts already run on it', () => {
    const only = target('only');
    expect(hedgeTarget(clock, route([only]), only, [only, only])).toBeUndefined();
  });
});

describe('HedgeAllowance.giveBack', () => {
  it('returns a hedge taken and not started, never beyond the burst', () => {
    const allowance = new HedgeAllowance();
    allowance.take();
    allowance.take();
    allowance.giveBack();

    expect([allowance.take(), allowance.take()]).toEqual([true, false]);
    allowance.giveBack();
    allowance.giveBack();
    allowance.giveBack();
    expect([allowance.take(), allowance.take(), allowance.take()]).toEqual([true, true, false]);
  });
});
