import { advanceClocks } from '../../test/support/fake-timers';
import {
  breakersInVirtualTime,
  fail,
  lasting,
  refusalOf,
  stopped,
  succeed,
  transient,
} from '../../test/support/breaker-attempts';
import { Breaker, type ProbeOutcome } from './breaker';
import type { BreakerSettings } from './breaker-settings';

// The slow-call rate (slowCallDurationMs, slowCallRatePercentage), in virtual time: an attempt's
// duration is measured on the FakeClock, which `lasting` moves on while the attempt is out.

const SETTINGS: BreakerSettings = {
  errorThresholdPercentage: 50,
  volumeThreshold: 4,
  resetTimeoutMs: 5_000,
  rollingCountTimeoutMs: 60_000,
  slowCallDurationMs: 500,
  slowCallRatePercentage: 50,
};

const virtual = breakersInVirtualTime(SETTINGS);
const breaker = virtual.breaker;

const slowly = (target: Breaker, tenant?: string) => lasting(target, virtual.clock, 501, { tenant });

/** A breaker opened by slow successes alone. */
async function openedSlowly(overrides: Partial<BreakerSettings> = {}): Promise<Breaker> {
  const target = breaker(overrides);
  for (let i = 0; i < 4; i++) await expect(slowly(target)).resolves.toBe('ok');
  expect(target.state).toBe('open');
  return target;
}

describe('Breaker with a slow-call rate', () => {
  describe('closed', () => {
    it('opens once more than slowCallRatePercentage of the window’s attempts were slow, though every one succeeded', async () => {
      const target = breaker();
      await succeed(target);
      await slowly(target);
      await slowly(target);
      // 2 of 3: past the rate, but under volumeThreshold.
      expect(target.state).toBe('closed');
      await succeed(target);
      // 2 of 4: the rate reached, not passed.
      expect(target.state).toBe('closed');
      await slowly(target);

      expect(target.state).toBe('open');
      expect(target.snapshot()).toMatchObject({ state: 'open', failures: 0, successes: 5, slowCalls: 3 });
      expect((await refusalOf(target)).retryAfterMs).toBe(5_000);
    });

    it('counts an attempt slower than slowCallDurationMs, not one that took exactly that long', async () => {
      const target = breaker();
      for (let i = 0; i < 4; i++) await lasting(target, virtual.clock, 500);
      expect(target.state).toBe('closed');
      expect(target.snapshot().slowCalls).toBe(0);
      await lasting(target, virtual.clock, 501);
      expect(target.snapshot().slowCalls).toBe(1);
    });

    it('counts a slow failure as slow as well as failed', async () => {
      const target = breaker({ errorThresholdPercentage: 90 });
      await lasting(target, virtual.clock, 600, { error: transient() });
      await lasting(target, virtual.clock, 600, { error: transient() });
      await succeed(target);
      await slowly(target);
      // 2 failures of 4 stay under 90 %, 3 slow of 4 do not stay under 50 %.
      expect(target.state).toBe('open');
      expect(target.snapshot()).toMatchObject({ failures: 2, successes: 2, slowCalls: 3 });
    });

    it('counts a stopped attempt nowhere, however long it took', async () => {
      const target = breaker();
      for (let i = 0; i < 6; i++) await lasting(target, virtual.clock, 900, { error: stopped() });
      expect(target.state).toBe('closed');
      expect(target.snapshot()).toMatchObject({ failures: 0, successes: 0, slowCalls: 0 });
    });

    it('forgets slow calls older than the window', async () => {
      const target = breaker({ rollingCountTimeoutMs: 10_000 });
      await slowly(target);
      await slowly(target);
      advanceClocks(virtual.clock, 10_000);
      await succeed(target);
      await slowly(target);
      await succeed(target);
      await succeed(target);
      expect(target.state).toBe('closed');
      expect(target.snapshot().slowCalls).toBe(1);
    });

    it('never counts a call slow without slowCallDurationMs: the default', async () => {
      const target = breaker({ slowCallDurationMs: undefined });
      for (let i = 0; i < 6; i++) await lasting(target, virtual.clock, 60_000);
      expect(target.state).toBe('closed');
      expect(target.snapshot()).not.toHaveProperty('slowCalls');
    });

    it('reports each slow call to onSlowCall', async () => {
      const target = breaker();
      const listener = jest.fn();
      target.onSlowCall(listener);
      await succeed(target);
      await slowly(target);
      await lasting(target, virtual.clock, 700, { error: transient() });
      expect(listener).toHaveBeenCalledTimes(2);
    });
  });

  describe('half open', () => {
    async function halfOpened(overrides: Partial<BreakerSettings> = {}) {
      const target = await openedSlowly(overrides);
      advanceClocks(virtual.clock, target.settings.resetTimeoutMs);
      expect(target.state).toBe('half_open');
      const probes: ProbeOutcome[] = [];
      target.onProbe((outcome) => probes.push(outcome));
      return { target, probes };
    }

    it('closes on a fast probe', async () => {
      const { target, probes } = await halfOpened();
      await lasting(target, virtual.clock, 200);
      expect(target.state).toBe('closed');
      expect(probes).toEqual(['succeeded']);
    });

    it('opens again on a probe that succeeds slowly, as on a failed one, for a grown open time', async () => {
      const { target, probes } = await halfOpened({ backoffMultiplier: 2 });
      await expect(slowly(target)).resolves.toBe('ok');
      expect(target.state).toBe('open');
      expect(probes).toEqual(['slow']);
      expect((await refusalOf(target)).retryAfterMs).toBe(10_000);
    });

    it('gives a stopped probe’s slot back however long it took, counting it neither slow nor failed', async () => {
      const { target, probes } = await halfOpened();
      await expect(lasting(target, virtual.clock, 2_000, { error: stopped() })).resolves.toMatchObject({
        kind: 'stopped',
      });
      expect(target.state).toBe('half_open');
      expect(probes).toEqual(['stopped']);

      await lasting(target, virtual.clock, 100);
      expect(target.state).toBe('closed');
      expect(probes).toEqual(['stopped', 'succeeded']);
    });

    it('opens again on the one slow probe of several, with the others fast', async () => {
      const { target, probes } = await halfOpened({ halfOpenProbes: 3 });
      await succeed(target);
      await slowly(target);
      expect(target.state).toBe('open');
      expect(probes).toEqual(['succeeded', 'slow']);
    });
  });

  describe('with tenants', () => {
    it('refuses only the tenant whose own calls are slow while the others’ are fast, and stays closed', async () => {
      const target = breaker();
      await succeed(target, 'bravo');
      await succeed(target, 'charlie');
      // 3 slow of 5 attempts would open a shared breaker: all of them alpha's.
      for (let i = 0; i < 3; i++) await slowly(target, 'alpha');

      expect(target.state).toBe('closed');
      expect((await refusalOf(target, 'alpha')).retryAfterMs).toBe(5_000);
      await expect(succeed(target, 'bravo')).resolves.toBe('ok');
      expect(target.snapshot()).toMatchObject({
        state: 'closed',
        failures: 0,
        successes: 3,
        slowCalls: 0,
        tenantsOpen: [{ tenant: 'alpha', retryAfterMs: 5_000 }],
      });
    });

    it('opens for everyone when every tenant’s calls are slow: the dependency is slow', async () => {
      const target = breaker();
      await slowly(target, 'alpha');
      await slowly(target, 'bravo');
      await slowly(target, 'charlie');
      await slowly(target, 'alpha');
      expect(target.state).toBe('open');
      expect(target.snapshot().tenantsOpen).toEqual([]);
    });

    it('opens for everyone when a tenant is slow alone: nobody else’s fast call tells it from the dependency', async () => {
      const target = breaker();
      for (let i = 0; i < 4; i++) await slowly(target, 'alpha');
      expect(target.state).toBe('open');
      expect(target.snapshot().tenantsOpen).toEqual([]);
    });

    it('refuses the tenant again when its probe is slow, and serves it again after a fast one', async () => {
      const target = breaker();
      await succeed(target, 'bravo');
      await succeed(target, 'charlie');
      for (let i = 0; i < 3; i++) await slowly(target, 'alpha');
      advanceClocks(virtual.clock, 5_000);

      await expect(slowly(target, 'alpha')).resolves.toBe('ok');
      expect(target.state).toBe('closed');
      expect((await refusalOf(target, 'alpha')).retryAfterMs).toBe(5_000);
      expect(target.snapshot().slowCalls).toBe(0);

      advanceClocks(virtual.clock, 5_000);
      await expect(succeed(target, 'alpha')).resolves.toBe('ok');
      await expect(succeed(target, 'alpha')).resolves.toBe('ok');
      expect(target.snapshot().tenantsOpen).toEqual([]);
    });

    it('judges a refused tenant’s slow probe as the shared probe too when the breaker is half open meanwhile', async () => {
      const target = breaker();
      await succeed(target, 'bravo');
      await succeed(target, 'charlie');
      for (let i = 0; i < 3; i++) await slowly(target, 'alpha');
      // Then the dependency fails for everyone else: the shared breaker opens.
      await fail(target, transient(), 'bravo');
      await fail(target, transient(), 'charlie');
      await fail(target, transient(), 'bravo');
      expect(target.state).toBe('open');
      advanceClocks(virtual.clock, 5_000);
      expect(target.state).toBe('half_open');

      await expect(slowly(target, 'alpha')).resolves.toBe('ok');

      expect(target.state).toBe('open');
      expect((await refusalOf(target, 'alpha')).message).toContain('for this tenant');
    });

    it('tells a slow tenant from the dependency apart from a failing one: failures and slowness each by its own rate', async () => {
      const target = breaker({ volumeThreshold: 6 });
      for (let i = 0; i < 4; i++) await succeed(target, 'bravo');
      await fail(target, transient(), 'charlie');
      // 6 slow of 11: past the rate; 1 failure of 11 is not past the error threshold.
      for (let i = 0; i < 6; i++) await slowly(target, 'alpha');

      expect(target.state).toBe('closed');
      expect(target.snapshot().tenantsOpen).toEqual([{ tenant: 'alpha', retryAfterMs: 5_000 }]);
      expect(target.snapshot()).toMatchObject({ failures: 1, successes: 4, slowCalls: 0 });
    });
  });
});
