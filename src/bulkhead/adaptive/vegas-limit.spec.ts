import { seededRandom } from '../../common';
import { VegasLimit } from './vegas-limit';

const settings = { algorithm: 'vegas', min: 2, max: 200 } as const;

function feed(limit: VegasLimit, count: number, rttMs: number, dropped = false): void {
  for (let i = 0; i < count; i++) limit.onSample(rttMs, limit.limit, dropped);
}

describe('VegasLimit', () => {
  it('grows while calls take the fastest time seen (no queue at the dependency)', () => {
    const limit = new VegasLimit(settings, 10, seededRandom(1));
    feed(limit, 10, 100);
    expect(limit.limit).toBeGreaterThan(30);
  });

  it('shrinks once the latency shows a queue past 6·log10 of the limit', () => {
    const limit = new VegasLimit(settings, 60, seededRandom(2));
    limit.onSample(100, 60, false);
    feed(limit, 20, 300);
    expect(limit.limit).toBeLessThan(60);
  });

  it('shrinks on timeouts', () => {
    const limit = new VegasLimit(settings, 50, seededRandom(3));
    limit.onSample(100, 50, false);
    feed(limit, 10, 200, true);
    expect(limit.limit).toBe(40);
  });

  it('measures the fastest time afresh now and then, so a lasting slowdown stops reading as a queue', () => {
    const limit = new VegasLimit({ ...settings, probeMultiplier: 2 }, 20, seededRandom(4));
    limit.onSample(100, 20, false);
    feed(limit, 200, 500);
    // After a probe took 500 ms as the fastest time, 500 ms calls show no queue: it grows again.
    const low = limit.limit;
    feed(limit, 5, 500);
    expect(limit.limit).toBeGreaterThanOrEqual(low);
    expect(limit.limit).toBeGreaterThan(2);
  });

  it('stays within its bounds', () => {
    const limit = new VegasLimit(settings, 10, seededRandom(5));
    feed(limit, 500, 100);
    expect(limit.limit).toBe(200);
    feed(limit, 500, 100, true);
    expect(limit.limit).toBe(2);
  });
});
