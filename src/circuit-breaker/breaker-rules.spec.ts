import { ResilienceError } from '../common';
import { FakeClock } from '../common/fake-clock';
import { breakersInVirtualTime } from '../../test/support/breakers-in-virtual-time';
import { advanceClocks } from '../../test/support/fake-timers';
import type { BlameRule } from './blame-rule';
import { Breaker } from './breaker';
import type { BreakerRules } from './breaker-rules';
import type { BreakerSettings } from './breaker-settings';
import type { SlowCallRule } from './slow-call-rule';

// Toy rules plugged into a Breaker through BreakerRules: the seam for "whose failure is it" and
// "what is slow" works without touching the breaker. Virtual time: FakeClock and jest's timers.

const SETTINGS: BreakerSettings = {
  errorThresholdPercentage: 50,
  volumeThreshold: 4,
  resetTimeoutMs: 5_000,
  rollingCountTimeoutMs: 10_000,
};

/** A rule that never blames a tenant: every failure is the dependency's, as without tenants. */
const NEVER_BLAME: BlameRule = { blameFailure: () => undefined, blameSlowness: () => undefined };

/** A rule that blames a tenant for its very first failure, whatever the others do. */
const BLAME_AT_ONCE: BlameRule = { blameFailure: (tenant) => tenant, blameSlowness: () => undefined };

/** Slow from 50 ms, and a single slow call opens it. */
const FIRST_SLOW_CALL_OPENS: SlowCallRule = { isSlow: (ms) => ms >= 50, trips: (window) => window.slow >= 1 };

const made: Breaker[] = [];
let clock: FakeClock;

function breaker(rules?: BreakerRules): Breaker {
  const created = new Breaker('search', SETTINGS, clock, rules);
  made.push(created);
  return created;
}

const transient = () => new ResilienceError('transient', 'upstream answered 500');
const failAs = (target: Breaker, tenant: string) =>
  target.fire(() => Promise.reject(transient()), tenant).catch(() => undefined);
const succeedAs = (target: Breaker, tenant: string) => target.fire(async () => 'ok', tenant);

/** Bravo succeeds once, then alpha fails four times: alpha's own failures, by the default rule. */
async function alphaFailsAlone(target: Breaker): Promise<void> {
  await succeedAs(target, 'bravo');
  for (let i = 0; i < 4; i++) await failAs(target, 'alpha');
}

breakersInVirtualTime(made, (fresh) => (clock = fresh));

describe('a blame rule plugged into the breaker', () => {
  it('by default, refuses alone the tenant whose own calls fail, and stays closed for the others', async () => {
    const target = breaker();
    await alphaFailsAlone(target);

    expect(target.state).toBe('closed');
    expect(target.refusal('alpha')).toMatchObject({ kind: 'circuit_open' });
    expect(target.refusal('bravo')).toBeUndefined();
  });

  it('that never blames a tenant opens the breaker for everyone on the same failures', async () => {
    const target = breaker({ blame: NEVER_BLAME });
    await alphaFailsAlone(target);

    expect(target.state).toBe('open');
    expect(target.refusal('bravo')).toMatchObject({ kind: 'circuit_open' });
    expect(target.snapshot().tenantsOpen).toEqual([]);
  });

  it('that blames at once refuses a tenant on its first failure and takes the failure out of the window', async () => {
    const target = breaker({ blame: BLAME_AT_ONCE });
    await failAs(target, 'alpha');

    expect(target.snapshot()).toMatchObject({
      state: 'closed',
      failures: 0,
      tenantsOpen: [{ tenant: 'alpha', retryAfterMs: SETTINGS.resetTimeoutMs }],
    });
    expect(target.refusal('bravo')).toBeUndefined();
  });
});

describe('a slow-call rule plugged into the breaker', () => {
  it('measures attempts though the settings set no slow-call duration, and opens as it says', async () => {
    const target = breaker({ slowCalls: FIRST_SLOW_CALL_OPENS });
    const slowCalls: number[] = [];
    target.onSlowCall(() => slowCalls.push(clock.now()));

    const fast = target.fire(async () => 'ok');
    advanceClocks(clock, 49);
    await fast;
    expect(target.snapshot()).toMatchObject({ state: 'closed', slowCalls: 0 });

    const slow = target.fire(() => new Promise((resolve) => clock.setTimer(() => resolve('late'), 50)));
    advanceClocks(clock, 50);
    await slow;

    expect(slowCalls).toHaveLength(1);
    expect(target.state).toBe('open');
  });

  it('given as undefined, turns slow calls off though the settings set a duration', async () => {
    const target = new Breaker('search', { ...SETTINGS, slowCallDurationMs: 10 }, clock, { slowCalls: undefined });
    made.push(target);

    const slow = target.fire(() => new Promise((resolve) => clock.setTimer(() => resolve('late'), 100)));
    advanceClocks(clock, 100);
    await slow;

    expect(target.snapshot().slowCalls).toBeUndefined();
  });
});
