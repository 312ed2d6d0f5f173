import { RollingWindow } from './rolling-window';

describe('RollingWindow', () => {
  it('counts failures and successes recorded within the window', () => {
    const window = new RollingWindow(10_000, 10, 0);
    window.recordFailure(0);
    window.recordSuccess(500);
    window.recordFailure(9_999);

    expect([window.failures, window.successes, window.volume]).toEqual([2, 1, 3]);
  });

  it('drops a bucket once the whole window has passed it, one bucket at a time', () => {
    const window = new RollingWindow(10_000, 10, 0);
    window.recordFailure(0);
    window.recordFailure(1_000);

    window.advance(9_999);
    expect(window.failures).toBe(2);
    window.advance(10_000);
    expect(window.failures).toBe(1);
    window.advance(11_000);
    expect(window.failures).toBe(0);
  });

  it('empties itself after a gap longer than the window, however long', () => {
    const window = new RollingWindow(10_000, 10, 0);
    for (let at = 0; at < 10_000; at += 1_000) window.recordSuccess(at);

    window.recordFailure(1_000_000);

    expect([window.failures, window.successes]).toEqual([1, 0]);
  });

  it('drops nothing when the clock steps back', () => {
    const window = new RollingWindow(10_000, 10, 5_000);
    window.recordFailure(5_000);

    window.recordSuccess(1_000);

    expect([window.failures, window.successes]).toEqual([1, 1]);
  });

  it('clear() empties it and starts the buckets from the given time', () => {
    const window = new RollingWindow(10_000, 10, 0);
    window.recordFailure(0);
    window.clear(3_500);
    window.recordFailure(3_500);

    window.advance(13_499);
    expect(window.failures).toBe(1);
    window.advance(13_500);
    expect(window.failures).toBe(0);
  });
});
