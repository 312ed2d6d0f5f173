import type { Promised } from '../common';
import type { FakeClock } from '../common/fake-clock';
import type { BudgetStore } from './budget.store';

/**
 * What each part of the {@link BudgetStore} contract takes from `describeBudgetStore`: a fresh
 * store and the clock it runs on, both per test, so they are read when a test runs.
 */
export interface BudgetContractContext {
  store: () => Promise<Promised<BudgetStore>>;
  clock: () => FakeClock;
}

export const DAY = 'day:2026-01-01';
export const NEXT_DAY = 'day:2026-01-02';
export const TTL_MS = 60_000;
/** One call's cost: 0.001 USD. */
export const COST = 1_000;
