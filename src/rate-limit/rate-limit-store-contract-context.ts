import type { Promised } from '../common';
import type { FakeClock } from '../common/fake-clock';
import type { BucketRule, RateLimitDecision, RateLimitStore } from './rate-limit.store';

/**
 * What each part of the {@link RateLimitStore} contract takes from `describeRateLimitStore`: the
 * store under test and the clock it runs on, both fresh per test, and two ways to take from it.
 */
export interface RateLimitContractContext {
  subject: () => Promised<RateLimitStore>;
  clock: () => FakeClock;
  /** Takes one at a time until refused; answers how many were admitted. */
  admitted: (key: string, rules: readonly BucketRule[], amounts: readonly number[], most?: number) => Promise<number>;
  /** Takes 1 from the one bucket of `rule`. */
  take1: (key: string, rule: BucketRule) => Promise<RateLimitDecision>;
}

/** The context for the store and clock that `subject` and `clock` answer when a test runs. */
export function rateLimitContractContext(
  subject: () => Promised<RateLimitStore>,
  clock: () => FakeClock,
): RateLimitContractContext {
  return {
    subject,
    clock,
    async admitted(key, rules, amounts, most = 10_000) {
      for (let count = 0; count < most; count++) {
        if (!(await subject().take(key, rules, amounts)).allowed) return count;
      }
      return most;
    },
    take1: (key, rule) => subject().take(key, [rule], [1]),
  };
}

export const SECOND = 1_000;
export const MINUTE = 60_000;

export const rpm = (perMinute: number): BucketRule => ({ name: 'rpm', perMinute });
export const tpm = (perMinute: number): BucketRule => ({ name: 'tpm', perMinute });
