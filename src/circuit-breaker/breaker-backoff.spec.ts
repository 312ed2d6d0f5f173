import { advanceClocks } from '../../test/support/fake-timers';
import { breakersInVirtualTime, fail, refusalOf, succeed, transient } from '../../test/support/breaker-attempts';
import { Breaker } from './breaker';
import type { BreakerSettings } from './breaker-settings';

// The open time that grows on each failed probe (backoffMultiplier, maxResetTimeoutMs), in
// virtual time: the Retry-After on the FakeClock, opossum's half-open timer on jest's.

const SETTINGS: BreakerSettings = {
  errorThresholdPercentage: 50,
  volumeThreshold: 2,
  resetTimeoutMs: 1_000,
  rollingCountTimeoutMs: 10_000,
};

const virtual = breakersInVirtualTime(SETTINGS);

async function opened(overrides: Partial<BreakerSettings>): Promise<Breaker> {
  const target = virtual.breaker(overrides);
  for (let i = 0; i < target.settings.volumeThreshold; i++) await fail(target);
  expect(target.state).toBe('open');
  return target;
}

/** Waits out the open time `ms` (half-opening exactly then, not a millisecond before), then fails the probe. */
async function failProbeAfter(target: Breaker, ms: number): Promise<void> {
  expect((await refusalOf(target)).retryAfterMs).toBe(ms);
  advanceClocks(virtual.clock, ms - 1);
  expect(target.state).toBe('open');
  advanceClocks(virtual.clock, 1);
  expect(target.state).toBe('half_open');
  await fail(target);
  expect(target.state).toBe('open');
}

describe('Breaker open time', () => {
  it('stays resetTimeoutMs after every failed probe by default', async () => {
    const target = await opened({});
    await failProbeAfter(target, 1_000);
    await failProbeAfter(target, 1_000);
    await failProbeAfter(target, 1_000);
    expect(target.snapshot().openTimeMs).toBeUndefined();
  });

  it('multiplies by backoffMultiplier on each failed probe: the Retry-After and the half-open timer both', async () => {
    const target = await opened({ backoffMultiplier: 2, maxResetTimeoutMs: 60_000 });
    await failProbeAfter(target, 1_000);
    await failProbeAfter(target, 2_000);
    await failProbeAfter(target, 4_000);
    expect((await refusalOf(target)).retryAfterMs).toBe(8_000);
    expect(target.snapshot().openTimeMs).toBe(8_000);
  });

  it('states the open time left as the Retry-After while the grown open time runs', async () => {
    const target = await opened({ backoffMultiplier: 3 });
    await failProbeAfter(target, 1_000);
    advanceClocks(virtual.clock, 1_200);
    expect((await refusalOf(target)).retryAfterMs).toBe(1_800);
  });

  it('grows no further than maxResetTimeoutMs', async () => {
    const target = await opened({ backoffMultiplier: 3, maxResetTimeoutMs: 5_000 });
    await failProbeAfter(target, 1_000);
    await failProbeAfter(target, 3_000);
    await failProbeAfter(target, 5_000);
    await failProbeAfter(target, 5_000);
  });

  it('grows to ten times resetTimeoutMs at most without maxResetTimeoutMs', async () => {
    const target = await opened({ backoffMultiplier: 4 });
    await failProbeAfter(target, 1_000);
    await failProbeAfter(target, 4_000);
    await failProbeAfter(target, 10_000);
    expect((await refusalOf(target)).retryAfterMs).toBe(10_000);
  });

  it('is resetTimeoutMs again once a probe closes the circuit', async () => {
    const target = await opened({ backoffMultiplier: 2 });
    await failProbeAfter(target, 1_000);
    await failProbeAfter(target, 2_000);
    advanceClocks(virtual.clock, 4_000);
    await succeed(target);
    expect(target.state).toBe('closed');
    expect(target.snapshot().openTimeMs).toBe(1_000);

    await fail(target);
    await fail(target);
    expect(target.state).toBe('open');
    await failProbeAfter(target, 1_000);
    expect((await refusalOf(target)).retryAfterMs).toBe(2_000);
  });

  it('is resetTimeoutMs again once an operator closes the circuit', async () => {
    const target = await opened({ backoffMultiplier: 2 });
    await failProbeAfter(target, 1_000);
    target.close();
    await fail(target);
    await fail(target);
    expect((await refusalOf(target)).retryAfterMs).toBe(1_000);
    advanceClocks(virtual.clock, 1_000);
    expect(target.state).toBe('half_open');
  });

  it('backs off for a tenant refused on its own too, and forgets it once the tenant is served again', async () => {
    const target = virtual.breaker({ volumeThreshold: 4, backoffMultiplier: 2 });
    await succeed(target, 'bravo');
    await succeed(target, 'charlie');
    for (let i = 0; i < 3; i++) await fail(target, transient(), 'alpha');
    expect(target.state).toBe('closed');

    for (const openMs of [1_000, 2_000, 4_000]) {
      expect((await refusalOf(target, 'alpha')).retryAfterMs).toBe(openMs);
      advanceClocks(virtual.clock, openMs);
      await fail(target, transient(), 'alpha');
    }
    expect((await refusalOf(target, 'alpha')).retryAfterMs).toBe(8_000);
    advanceClocks(virtual.clock, 8_000);
    await succeed(target, 'alpha');
    expect(target.snapshot().tenantsOpen).toEqual([]);
    expect(target.state).toBe('closed');

    // Blamed again later, it starts from resetTimeoutMs.
    advanceClocks(virtual.clock, 10_000);
    await succeed(target, 'bravo');
    await succeed(target, 'charlie');
    for (let i = 0; i < 3; i++) await fail(target, transient(), 'alpha');
    expect((await refusalOf(target, 'alpha')).retryAfterMs).toBe(1_000);
  });
});
