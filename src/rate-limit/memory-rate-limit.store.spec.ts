import { FakeClock } from '../common/fake-clock';
import { MemoryRateLimitStore } from './memory-rate-limit.store';
import type { BucketRule } from './rate-limit.store';
import { describeRateLimitStore } from './rate-limit-store.contract';

describeRateLimitStore('MemoryRateLimitStore', (clock) => new MemoryRateLimitStore(clock));

const RPM_10: BucketRule = { name: 'rpm', perMinute: 10 };
const SECOND = 1_000;

describe('MemoryRateLimitStore', () => {
  let clock: FakeClock;
  let store: MemoryRateLimitStore;

  beforeEach(() => {
    clock = new FakeClock();
    store = new MemoryRateLimitStore(clock);
  });

  /** Decisions on a key of its own that leave nothing behind: each one sweeps. */
  function sweepTimes(times: number): void {
    for (let index = 0; index < times; index++) store.adjust('probe', [RPM_10], [0]);
  }

  it('drops a key once all its buckets are full again', () => {
    for (let index = 0; index < 10; index++) {
      store.take(`tenant-${index}`, [RPM_10, { name: 'tpm', perMinute: 1000 }], [1, 500]);
    }
    expect(store.size).toBe(10);

    clock.advance(60 * SECOND);
    sweepTimes(5);

    expect(store.size).toBe(0);
  });

  it('keeps a key until its slowest bucket is full', () => {
    store.take('acme', [RPM_10, { name: 'tpm', perMinute: 1000 }], [10, 100]);

    clock.advance(6 * SECOND);
    sweepTimes(5);
    expect(store.size).toBe(1);

    clock.advance(54 * SECOND);
    sweepTimes(1);
    expect(store.size).toBe(0);
  });

  it('keeps a key in overage past 60 s, until it is full', () => {
    store.adjust('acme', [RPM_10], [-20]);

    clock.advance(60 * SECOND);
    sweepTimes(5);
    expect(store.size).toBe(1);
    expect(store.take('acme', [RPM_10], [1])).toMatchObject({
      allowed: false,
      retryAfterMs: 6 * SECOND,
    });

    clock.advance(60 * SECOND);
    sweepTimes(1);
    expect(store.size).toBe(0);
  });

  it('keeps a key held by a bucket that the latest decision did not name', () => {
    store.take('acme', [{ name: 'tpm', perMinute: 1000 }], [1000]);
    store.take('acme', [RPM_10], [1]);

    clock.advance(6 * SECOND);
    sweepTimes(5);

    expect(store.size).toBe(1);
    expect(store.take('acme', [{ name: 'tpm', perMinute: 1000 }], [500])).toMatchObject({
      allowed: false,
    });
  });

  it('sweeps full keys past one that stays in overage', () => {
    store.adjust('debtor', [RPM_10], [-1_000]);
    for (let index = 0; index < 10; index++) store.take(`tenant-${index}`, [RPM_10], [1]);

    clock.advance(60 * SECOND);
    sweepTimes(10);

    expect(store.size).toBe(1);
    expect(store.take('debtor', [RPM_10], [1])).toMatchObject({ allowed: false });
  });

  it('keeps nothing for decisions that leave every bucket full', () => {
    store.take('acme', [RPM_10], [0]);
    store.take('acme', [RPM_10], [11]);
    store.adjust('acme', [RPM_10], [5]);
    expect(store.size).toBe(0);

    store.take('acme', [RPM_10], [3]);
    store.adjust('acme', [RPM_10], [3]);
    expect(store.size).toBe(0);
  });

  it('holds only the keys below full while many keys come and go', () => {
    // Each key is full 6 s after its take; one new key a second keeps 6 below full, plus the
    // few full ones the sweep has not reached yet.
    for (let index = 0; index < 1_000; index++) {
      clock.advance(SECOND);
      store.take(`tenant-${index}`, [RPM_10], [1]);
      expect(store.size).toBeLessThanOrEqual(8);
    }
  });

  it('answers a dropped key like a fresh one', () => {
    store.take('acme', [RPM_10], [10]);
    clock.advance(60 * SECOND);
    sweepTimes(1);
    expect(store.size).toBe(0);

    expect(store.take('acme', [RPM_10], [10])).toEqual({
      allowed: true,
      retryAfterMs: 0,
      buckets: [{ name: 'rpm', remaining: 0, resetMs: 60 * SECOND }],
    });
  });

  it('decides at once, without a promise: a call limited through it waits for nothing', () => {
    const decisions = [store.take('acme', [RPM_10], [10]), store.take('acme', [RPM_10], [1])];

    expect(decisions).toMatchObject([{ allowed: true }, { allowed: false }]);
  });

  it('refills by fractional milliseconds of a monotonic clock', () => {
    let now = 0;
    const fractional = new MemoryRateLimitStore({
      now: () => now,
      wallNow: () => clock.wallNow(),
      setTimer: (callback, delayMs) => clock.setTimer(callback, delayMs),
      clearTimer: (handle) => clock.clearTimer(handle),
    });
    fractional.take('acme', [RPM_10], [10]);

    now = 5_999.5;
    expect(fractional.take('acme', [RPM_10], [1])).toMatchObject({ allowed: false, retryAfterMs: 1 });
    now = 6_000.25;
    expect(fractional.take('acme', [RPM_10], [1])).toMatchObject({ allowed: true });
  });
});
