import CircuitBreaker from 'opossum';
import type { Clock } from '../common';
import { FakeClock } from '../common/fake-clock';
import { WindowStatus } from './opossum-engine';
import { RollingWindow } from './rolling-window';

let clock: FakeClock;
const made: WindowStatus[] = [];

// A rolling window as its engine hands it to opossum (WindowStatus, opossum-engine.ts): opossum
// reports outcomes to the status, which counts them into the window (`counts`).
function rollingWindow(windowMs = 10_000, buckets = 10, on: Clock = clock): WindowStatus {
  const created = new WindowStatus(new RollingWindow(on, windowMs, buckets));
  made.push(created);
  return created;
}

function counts({ counts: window }: WindowStatus): [failures: number, successes: number] {
  window.moveOn();
  return [window.failures, window.successes];
}

beforeEach(() => {
  clock = new FakeClock();
});

afterEach(() => {
  for (const window of made.splice(0)) window.shutdown();
  jest.useRealTimers();
});

describe('RollingWindow', () => {
  it('counts the failures and successes opossum reports within the window', () => {
    const window = rollingWindow();
    window.increment('failures');
    clock.advance(500);
    window.increment('successes');
    clock.advance(9_499);
    window.increment('failures');

    expect(counts(window)).toEqual([2, 1]);
  });

  it('ignores what else opossum reports: fires, rejects, timeouts, fallbacks, cache and semaphore counts', () => {
    const window = rollingWindow();
    for (const property of ['fires', 'rejects', 'timeouts', 'fallbacks', 'cacheHits', 'semaphoreRejections']) {
      window.increment(property, 12);
    }

    expect(window.stats).toMatchObject({ failures: 0, successes: 0, fires: 0, rejects: 0, timeouts: 0 });
  });

  it('leaves out the one success reported after skipNextSuccess (a stopped attempt’s), and counts the next', () => {
    const window = rollingWindow();
    window.skipNextSuccess();
    window.increment('successes', 3);
    window.increment('successes', 3);

    expect(counts(window)).toEqual([0, 1]);
  });

  it('gives opossum as fires the attempts that ended, and keeps no latency', () => {
    const window = rollingWindow();
    window.increment('fires');
    window.increment('failures', 40);
    window.increment('fires');
    window.increment('successes', 7);
    window.increment('fires');

    expect(window.stats).toMatchObject({ failures: 1, successes: 1, fires: 2, latencyTimes: [], latencyMean: -1 });
  });

  it('drops a bucket once the whole window has passed it, one bucket at a time', () => {
    const window = rollingWindow(10_000, 10);
    window.increment('failures');
    clock.advance(1_000);
    window.increment('failures');

    clock.advance(8_999);
    expect(counts(window)).toEqual([2, 0]);
    clock.advance(1);
    expect(counts(window)).toEqual([1, 0]);
    clock.advance(1_000);
    expect(counts(window)).toEqual([0, 0]);
  });

  it('moves on by itself before it counts or gives its stats: no timer needs to move it', () => {
    const window = rollingWindow(10_000, 10);
    window.increment('failures');
    clock.advance(10_000);

    window.increment('successes');
    expect([window.counts.failures, window.counts.successes]).toEqual([0, 1]);
    clock.advance(10_000);
    expect(window.stats).toMatchObject({ failures: 0, successes: 0, fires: 0 });
  });

  it('empties itself after a gap longer than the window, however long', () => {
    const window = rollingWindow(10_000, 10);
    for (let at = 0; at < 10; at++) {
      window.increment('successes');
      clock.advance(1_000);
    }

    clock.advance(1_000_000);
    window.increment('failures');

    expect(counts(window)).toEqual([1, 0]);
  });

  it('drops nothing when the clock steps back', () => {
    let now = 5_000;
    const steppingBack: Clock = {
      now: () => now,
      wallNow: () => now,
      setTimer: () => undefined,
      clearTimer: () => undefined,
    };
    const window = rollingWindow(10_000, 10, steppingBack);
    window.increment('failures');

    now = 1_000;
    window.increment('successes');

    expect(counts(window)).toEqual([1, 1]);
  });

  it('gives its buckets newest first', () => {
    const window = rollingWindow(10_000, 10);
    window.increment('failures');
    clock.advance(1_000);
    window.increment('successes');
    window.increment('successes');

    const buckets = window.window;

    expect(buckets).toHaveLength(10);
    expect(buckets.slice(0, 3).map(({ failures, successes, fires }) => [failures, successes, fires])).toEqual([
      [0, 2, 2],
      [1, 0, 1],
      [0, 0, 0],
    ]);
  });

  it('empties itself when opossum closes the circuit, and counts its buckets afresh from then', () => {
    const window = rollingWindow(10_000, 10);
    window.increment('failures');
    clock.advance(3_500);

    window.close();
    window.increment('failures');

    expect(counts(window)).toEqual([1, 0]);
    clock.advance(9_999);
    expect(counts(window)).toEqual([1, 0]);
    clock.advance(1);
    expect(counts(window)).toEqual([0, 0]);
  });

  it('is a status opossum takes as it is: it opens on the attempts that ended, whatever is in flight', async () => {
    const window = rollingWindow();
    const circuit = new CircuitBreaker((attempt: () => Promise<void>) => attempt(), {
      status: window,
      timeout: false,
      volumeThreshold: 2,
      errorThresholdPercentage: 70,
    });
    const fail = () => circuit.fire(() => Promise.reject(new Error('down'))).catch(() => undefined);
    void circuit.fire(() => new Promise<never>(() => undefined));

    await fail();
    expect(circuit.opened).toBe(false);
    await fail();

    // Two of two ended attempts failed; counting the one in flight, it would be two of three.
    expect(circuit.status).toBe(window);
    expect(circuit.opened).toBe(true);
    circuit.shutdown();
  });

  it('counts slow attempts beside their outcomes, drops them with their bucket, takes them back and empties them', () => {
    const window = rollingWindow();
    window.increment('successes');
    window.counts.countSlow();
    clock.advance(5_000);
    window.increment('failures');
    window.counts.countSlow();
    window.increment('successes');
    window.counts.countSlow();
    expect(window.counts.slow).toBe(3);

    window.counts.forget(0, 0, 1, 1);
    expect([window.counts.failures, window.counts.successes, window.counts.slow]).toEqual([1, 1, 2]);
    // Never below zero: the current bucket holds one slow attempt left.
    window.counts.forget(0, 0, 0, 5);
    expect(window.counts.slow).toBe(1);

    clock.advance(5_000);
    window.counts.moveOn();
    expect([window.counts.failures, window.counts.successes, window.counts.slow]).toEqual([1, 0, 0]);
    window.counts.countSlow();
    window.counts.clear();
    expect(window.counts.slow).toBe(0);
  });

  it('sets no timer: opossum’s own Status rotates its buckets on an interval', () => {
    jest.useFakeTimers();
    rollingWindow();
    expect(jest.getTimerCount()).toBe(0);

    CircuitBreaker.newStatus({ rollingCountTimeout: 10_000, rollingCountBuckets: 10, enableSnapshots: false });
    expect(jest.getTimerCount()).toBe(1);
  });
});
