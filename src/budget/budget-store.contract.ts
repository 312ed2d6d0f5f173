import { promised } from '../common';
import { FakeClock } from '../common/fake-clock';
import type { BudgetStore } from './budget.store';
import type { BudgetContractContext } from './budget-store-contract-context';
import { describeBudgetStoreLapse } from './budget-store-lapse.contract';
import { describeBudgetStorePeriods } from './budget-store-periods.contract';
import { describeBudgetStoreRefusals } from './budget-store-refusals.contract';
import { describeBudgetStoreRenew } from './budget-store-renew.contract';
import { describeBudgetStoreReserve } from './budget-store-reserve.contract';
import { describeBudgetStoreSettle } from './budget-store-settle.contract';

/** Builds a fresh, empty store under test whose time is `clock`. */
export type MakeBudgetStore = (clock: FakeClock) => BudgetStore | Promise<BudgetStore>;

/**
 * The contract every {@link BudgetStore} keeps, asserted only through the interface and with
 * time moved only through the {@link FakeClock} handed to `makeStore`, so the same suite runs
 * against the memory store and against Redis. Each behaviour's tests are in a file of their own.
 */
export function describeBudgetStore(name: string, makeStore: MakeBudgetStore): void {
  describe(`BudgetStore contract: ${name}`, () => {
    let clock: FakeClock;

    beforeEach(() => {
      clock = new FakeClock();
    });

    const context: BudgetContractContext = {
      store: async () => promised(await makeStore(clock)),
      clock: () => clock,
    };

    describeBudgetStoreReserve(context);
    describeBudgetStoreRefusals(context);
    describeBudgetStoreSettle(context);
    describeBudgetStoreLapse(context);
    describeBudgetStorePeriods(context);
    describeBudgetStoreRenew(context);
  });
}
