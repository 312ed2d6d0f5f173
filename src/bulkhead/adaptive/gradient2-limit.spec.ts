import type { AdaptiveLimit } from './adaptive-limit';
import type { Gradient2Settings } from './adaptive-settings';
import { Gradient2Limit } from './gradient2-limit';

const settings = { algorithm: 'gradient2', min: 2, max: 100 } as const;

/** As a lane holds it: a drop reaches it as a sample like any other, its time the timeout's. */
const gradient2 = (options: Gradient2Settings, initial: number): AdaptiveLimit => new Gradient2Limit(options, initial);

/** `count` calls of `rttMs` each, with the lane in full use. */
function feed(limit: AdaptiveLimit, count: number, rttMs: number): void {
  for (let i = 0; i < count; i++) limit.onSample(rttMs, limit.limit, false);
}

describe('Gradient2Limit', () => {
  it('grows while latency holds steady, up to max', () => {
    const limit = gradient2(settings, 10);
    feed(limit, 20, 100);
    expect(limit.limit).toBeGreaterThan(20);
    feed(limit, 500, 100);
    expect(limit.limit).toBe(100);
  });

  it('falls as the dependency slows five-fold, and grows back once it is fast again', () => {
    const limit = gradient2(settings, 50);
    feed(limit, 100, 100);
    const before = limit.limit;
    feed(limit, 30, 500);
    const slowed = limit.limit;
    expect(slowed).toBeLessThan(before / 3);
    feed(limit, 60, 100);
    expect(limit.limit).toBeGreaterThan(slowed * 3);
  });

  it('falls by half at most a call, and never below min', () => {
    const limit = gradient2({ ...settings, smoothing: 1, queueSize: 0 }, 80);
    feed(limit, 10, 10);
    const before = limit.limit;
    limit.onSample(10_000, before, false);
    // smoothing 1, no queue allowed: a thousand-fold slower call halves it, no more.
    expect(limit.limit).toBe(Math.floor(before / 2));
    feed(limit, 200, 10_000_000);
    expect(limit.limit).toBe(2);
  });

  it('stays where it is while the lane is used below half its limit', () => {
    const limit = gradient2(settings, 40);
    for (let i = 0; i < 50; i++) limit.onSample(100, 5, false);
    for (let i = 0; i < 50; i++) limit.onSample(1_000, 5, false);
    expect(limit.limit).toBe(40);
  });

  it('takes a timeout as the slowness its time shows', () => {
    const limit = gradient2(settings, 50);
    feed(limit, 50, 100);
    const before = limit.limit;
    for (let i = 0; i < 10; i++) limit.onSample(5_000, limit.limit, true);
    expect(limit.limit).toBeLessThan(before);
  });

  it('survives calls timed at zero on a coarse or virtual clock', () => {
    const limit = gradient2(settings, 10);
    feed(limit, 50, 0);
    expect(Number.isInteger(limit.limit)).toBe(true);
    expect(limit.limit).toBeGreaterThan(10);
  });
});
