import { breakerSettings, checkBreakerSettings, type BreakerSettings, maxResetTimeoutMs } from './breaker-settings';

const check = (overrides: Partial<BreakerSettings>) => () =>
  checkBreakerSettings('search', breakerSettings(overrides), 10);

describe('checkBreakerSettings', () => {
  it.each<[string, Partial<BreakerSettings>, string]>([
    ['slowCallDurationMs 0', { slowCallDurationMs: 0 }, 'slowCallDurationMs must be a positive number'],
    ['slowCallDurationMs NaN', { slowCallDurationMs: Number.NaN }, 'slowCallDurationMs must be a positive number'],
    ['slowCallRatePercentage 0', { slowCallRatePercentage: 0 }, 'slowCallRatePercentage must be from 1 to 100'],
    ['slowCallRatePercentage 101', { slowCallRatePercentage: 101 }, 'slowCallRatePercentage must be from 1 to 100'],
    ['halfOpenProbes 0', { halfOpenProbes: 0 }, 'halfOpenProbes must be an integer of at least 1'],
    ['halfOpenProbes 1.5', { halfOpenProbes: 1.5 }, 'halfOpenProbes must be an integer of at least 1'],
    ['backoffMultiplier 0.9', { backoffMultiplier: 0.9 }, 'backoffMultiplier must be a number of at least 1'],
    ['backoffMultiplier Infinity', { backoffMultiplier: Infinity }, 'backoffMultiplier must be a number of at least 1'],
    [
      'maxResetTimeoutMs below resetTimeoutMs',
      { resetTimeoutMs: 1_000, maxResetTimeoutMs: 999 },
      'maxResetTimeoutMs must be at least resetTimeoutMs (1000)',
    ],
  ])('refuses %s with a RangeError naming the breaker and the setting', (_what, overrides, message) => {
    expect(check(overrides)).toThrow(new RangeError(`breaker 'search': ${message}`));
  });

  it('accepts the edges: a 1 ms slow call, every call slow, one probe, no growth, a cap equal to resetTimeoutMs', () => {
    expect(
      check({
        slowCallDurationMs: 1,
        slowCallRatePercentage: 100,
        halfOpenProbes: 1,
        backoffMultiplier: 1,
        resetTimeoutMs: 1_000,
        maxResetTimeoutMs: 1_000,
      }),
    ).not.toThrow();
  });
});

describe('maxResetTimeoutMs', () => {
  it('is ten times resetTimeoutMs unless set', () => {
    expect(maxResetTimeoutMs(breakerSettings({ resetTimeoutMs: 2_000 }))).toBe(20_000);
    expect(maxResetTimeoutMs(breakerSettings({ resetTimeoutMs: 2_000, maxResetTimeoutMs: 3_000 }))).toBe(3_000);
  });
});
