import { promised, type Promised } from '../common';
import { FakeClock } from '../common/fake-clock';
import type { RateLimitStore } from './rate-limit.store';
import { describeRateLimitStoreAdjust } from './rate-limit-store-adjust.contract';
import { describeRateLimitStoreAllOrNone } from './rate-limit-store-all-or-none.contract';
import { describeRateLimitStoreArguments } from './rate-limit-store-arguments.contract';
import { describeRateLimitStoreConcurrency } from './rate-limit-store-concurrency.contract';
import { rateLimitContractContext } from './rate-limit-store-contract-context';
import { describeRateLimitStoreIsolation } from './rate-limit-store-isolation.contract';
import { describeRateLimitStoreRetryAfter } from './rate-limit-store-retry-after.contract';
import { describeRateLimitStoreTake } from './rate-limit-store-take.contract';

/** Builds the store under test on the given clock (its only source of time). */
export type MakeRateLimitStore = (clock: FakeClock) => RateLimitStore | Promise<RateLimitStore>;

/**
 * The contract every {@link RateLimitStore} keeps, asserted only through the interface and with
 * time moved only through the {@link FakeClock} handed to `makeStore`, so the same suite runs
 * against the memory store and against Redis. `cleanup` runs after each test. Each behaviour's
 * tests are in a file of their own.
 */
export function describeRateLimitStore(
  name: string,
  makeStore: MakeRateLimitStore,
  cleanup?: () => Promise<void>,
): void {
  describe(`RateLimitStore contract: ${name}`, () => {
    let clock: FakeClock;
    let subject: Promised<RateLimitStore>;

    beforeEach(async () => {
      clock = new FakeClock();
      subject = promised(await makeStore(clock));
    });

    if (cleanup) afterEach(cleanup);

    const context = rateLimitContractContext(
      () => subject,
      () => clock,
    );

    describeRateLimitStoreTake(context);
    describeRateLimitStoreAllOrNone(context);
    describeRateLimitStoreRetryAfter(context);
    describeRateLimitStoreAdjust(context);
    describeRateLimitStoreIsolation(context);
    describeRateLimitStoreConcurrency(context);
    describeRateLimitStoreArguments(context);
  });
}
