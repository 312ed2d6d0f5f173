import { FakeClock } from '../common/fake-clock';
import { DEFAULT_RETRY_BUDGET, RetryBudget, type RetryBudgetSettings } from './retry-budget';

function budget(overrides: Partial<RetryBudgetSettings> = {}, clock = new FakeClock()): RetryBudget {
  return new RetryBudget({ percent: 20, minRetries: 3, windowMs: 10_000, ...overrides }, clock);
}

function recordCalls(retryBudget: RetryBudget, count: number): void {
  for (let i = 0; i < count; i++) retryBudget.recordCall();
}

/** Takes retries until the budget refuses one; how many it gave. */
function drain(retryBudget: RetryBudget): number {
  let taken = 0;
  while (retryBudget.tryRetry()) {
    taken++;
    if (taken > 10_000) throw new Error('the budget never ran out');
  }
  return taken;
}

describe('RetryBudget', () => {
  describe('how many retries a window allows', () => {
    it('allows minRetries with no calls at all', () => {
      expect(drain(budget({ minRetries: 3 }))).toBe(3);
    });

    it('allows minRetries when few calls were made', () => {
      const retryBudget = budget({ percent: 20, minRetries: 3 });
      recordCalls(retryBudget, 5);

      expect(drain(retryBudget)).toBe(3);
    });

    it('allows percent of the calls when many were made', () => {
      const retryBudget = budget({ percent: 20, minRetries: 3 });
      recordCalls(retryBudget, 100);

      expect(drain(retryBudget)).toBe(20);
      expect(retryBudget.window()).toEqual({ calls: 100, retries: 20 });
    });

    it('never allows a retry beyond the share: 20 % of 12 calls is 2 retries, not 3', () => {
      const retryBudget = budget({ percent: 20, minRetries: 0 });
      recordCalls(retryBudget, 12);

      expect(drain(retryBudget)).toBe(2);
    });

    it('grows with the calls made after it ran out', () => {
      const retryBudget = budget({ percent: 20, minRetries: 0 });
      recordCalls(retryBudget, 10);
      expect(drain(retryBudget)).toBe(2);

      recordCalls(retryBudget, 5);

      expect(drain(retryBudget)).toBe(1);
    });

    it('allows no retries at all with percent 0 and minRetries 0', () => {
      const retryBudget = budget({ percent: 0, minRetries: 0 });
      recordCalls(retryBudget, 1_000);

      expect(retryBudget.tryRetry()).toBe(false);
    });

    it('allows a retry for every call with percent 100', () => {
      const retryBudget = budget({ percent: 100, minRetries: 0 });
      recordCalls(retryBudget, 7);

      expect(drain(retryBudget)).toBe(7);
    });

    it('uses Envoy’s defaults: 20 % of the calls, at least 3, over 10 s', () => {
      expect(DEFAULT_RETRY_BUDGET).toEqual({ percent: 20, minRetries: 3, windowMs: 10_000 });
    });
  });

  describe('exhaustion', () => {
    it('answers false once spent, and keeps answering false', () => {
      const retryBudget = budget({ minRetries: 2 });

      expect([1, 2, 3, 4, 5].map(() => retryBudget.tryRetry())).toEqual([true, true, false, false, false]);
    });

    it('does not count a refused retry against the budget', () => {
      const retryBudget = budget({ percent: 20, minRetries: 1 });
      expect(drain(retryBudget)).toBe(1);
      expect(retryBudget.tryRetry()).toBe(false);
      expect(retryBudget.window().retries).toBe(1);

      // 10 calls allow 2 retries: 1 spent, so exactly 1 more, however often it was refused before.
      recordCalls(retryBudget, 10);

      expect(drain(retryBudget)).toBe(1);
    });
  });

  describe('the sliding window', () => {
    it('gives retries back windowMs after they were spent, not before', () => {
      const clock = new FakeClock();
      const retryBudget = budget({ minRetries: 3, windowMs: 10_000 }, clock);
      expect(drain(retryBudget)).toBe(3);

      clock.advance(9_999);
      expect(retryBudget.tryRetry()).toBe(false);

      clock.advance(1);
      expect(drain(retryBudget)).toBe(3);
    });

    it('drops the calls of old buckets out of the share', () => {
      const clock = new FakeClock();
      const retryBudget = budget({ percent: 20, minRetries: 0, windowMs: 10_000 }, clock);
      recordCalls(retryBudget, 50);
      clock.advance(5_000);
      recordCalls(retryBudget, 50);
      expect(retryBudget.window()).toEqual({ calls: 100, retries: 0 });

      clock.advance(5_000);
      expect(retryBudget.window()).toEqual({ calls: 50, retries: 0 });
      expect(drain(retryBudget)).toBe(10);

      clock.advance(5_000);
      expect(retryBudget.window()).toEqual({ calls: 0, retries: 10 });
      expect(retryBudget.tryRetry()).toBe(false);
    });

    it('drops retries bucket by bucket as the window passes them', () => {
      const clock = new FakeClock();
      const retryBudget = budget({ percent: 0, minRetries: 2, windowMs: 10_000 }, clock);
      expect(retryBudget.tryRetry()).toBe(true);
      clock.advance(3_000);
      expect(retryBudget.tryRetry()).toBe(true);
      expect(retryBudget.tryRetry()).toBe(false);

      // The first retry leaves the window at 10 s, the second at 13 s.
      clock.advance(7_000);
      expect(retryBudget.window().retries).toBe(1);
      expect(retryBudget.tryRetry()).toBe(true);
      expect(retryBudget.tryRetry()).toBe(false);

      clock.advance(2_999);
      expect(retryBudget.tryRetry()).toBe(false);
      clock.advance(1);
      expect(retryBudget.tryRetry()).toBe(true);
    });

    it('forgets everything after an idle gap of many windows', () => {
      const clock = new FakeClock();
      const retryBudget = budget({ percent: 20, minRetries: 3, windowMs: 10_000 }, clock);
      recordCalls(retryBudget, 100);
      expect(drain(retryBudget)).toBe(20);

      clock.advance(1_000_000);

      expect(retryBudget.window()).toEqual({ calls: 0, retries: 0 });
      expect(drain(retryBudget)).toBe(3);
    });

    it('moves the window on a clock that did not start at 0', () => {
      const clock = new FakeClock();
      clock.advance(123_456);
      const retryBudget = budget({ minRetries: 1, windowMs: 1_000 }, clock);
      expect(drain(retryBudget)).toBe(1);

      clock.advance(1_000);

      expect(drain(retryBudget)).toBe(1);
    });
  });

  describe('settings', () => {
    it.each([-1, 101, Number.NaN])('refuses percent %p', (percent) => {
      expect(() => budget({ percent })).toThrow(RangeError);
    });

    it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses minRetries %p', (minRetries) => {
      expect(() => budget({ minRetries })).toThrow(RangeError);
    });

    it.each([0, 9, Number.NaN, Number.POSITIVE_INFINITY])('refuses windowMs %p', (windowMs) => {
      expect(() => budget({ windowMs })).toThrow(RangeError);
    });

    it('accepts the edges: percent 0 and 100, minRetries 0, windowMs 10', () => {
      expect(() => budget({ percent: 0, minRetries: 0, windowMs: 10 })).not.toThrow();
      expect(() => budget({ percent: 100 })).not.toThrow();
    });
  });
});
