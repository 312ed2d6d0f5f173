import { breakerSettings } from './breaker-settings';
import { OpenTime } from './open-time';

describe('OpenTime', () => {
  it('is resetTimeoutMs, multiplied on each grow up to maxResetTimeoutMs, and resetTimeoutMs again on reset', () => {
    const openTime = new OpenTime(
      breakerSettings({ resetTimeoutMs: 1_000, backoffMultiplier: 1.5, maxResetTimeoutMs: 3_000 }),
    );
    expect(openTime.ms).toBe(1_000);
    expect([openTime.grow(), openTime.grow(), openTime.grow(), openTime.grow()]).toEqual([1_500, 2_250, 3_000, 3_000]);
    expect(openTime.reset()).toBe(1_000);
    expect(openTime.ms).toBe(1_000);
  });

  it('never grows with the default multiplier of 1', () => {
    const openTime = new OpenTime(breakerSettings({ resetTimeoutMs: 1_000 }));
    expect([openTime.grow(), openTime.grow()]).toEqual([1_000, 1_000]);
  });

  it('grows to ten times resetTimeoutMs without maxResetTimeoutMs', () => {
    const openTime = new OpenTime(breakerSettings({ resetTimeoutMs: 1_000, backoffMultiplier: 100 }));
    expect(openTime.grow()).toBe(10_000);
  });
});
