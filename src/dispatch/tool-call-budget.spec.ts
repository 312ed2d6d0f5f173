import { BudgetGate, type BudgetStore, MemoryBudgetStore } from '../budget';
import { isPromiseLike, ResilienceError } from '../common';
import { FakeClock } from '../common/fake-clock';
import { ToolCallBudget } from './tool-call-budget';

const PERIOD = 'day:2026-01-01';
const TIMES = { firstHoldMs: 40_000, retryHoldMs: 10_000, retryAfterMaxMs: 5_000 };
const USD = 1_000_000;

describe('ToolCallBudget', () => {
  let clock: FakeClock;
  let store: MemoryBudgetStore;

  beforeEach(() => {
    clock = new FakeClock();
    store = new MemoryBudgetStore(clock);
  });

  function gateOn(budgetStore: BudgetStore, acmeUsd = 2): BudgetGate {
    return new BudgetGate(budgetStore, { budgets: { period: 'day', tenants: { acme: acmeUsd } } }, clock);
  }

  /** The first attempt's money held, as the call admission holds it (src/dispatch/admission). */
  function held(gate: BudgetGate): ToolCallBudget {
    const first = gate.reserve('acme', 1, TIMES.firstHoldMs, TIMES.retryAfterMaxMs);
    if (!first || isPromiseLike(first)) throw new Error('expected the first attempt held at once');
    return new ToolCallBudget(gate, 'acme', 1, TIMES, first);
  }

  it('holds the first attempt for its first hold time, and a retry for the retry hold time', () => {
    const budget = held(gateOn(store));
    clock.advance(TIMES.firstHoldMs - 1);
    expect(store.read('acme', PERIOD)).toEqual({ spentMicros: 0, reservedMicros: USD });
    budget.settle(true);

    expect(budget.holdNext()).toBe(true);
    clock.advance(TIMES.retryHoldMs - 1);
    expect(store.read('acme', PERIOD)).toEqual({ spentMicros: USD, reservedMicros: USD });
    clock.advance(1);

    expect(store.read('acme', PERIOD)).toEqual({ spentMicros: USD, reservedMicros: 0 });
  });

  it('charges an attempt that ran, and nothing for one denied egress or one that never ran', () => {
    const budget = held(gateOn(store, 3));

    budget.settle(true, new ResilienceError('transient', 'reset'));
    budget.holdNext();
    budget.settle(true, new ResilienceError('egress_denied', 'not allowed'));
    budget.holdNext();
    budget.settle(false, new ResilienceError('circuit_open', 'open'));

    expect(store.read('acme', PERIOD)).toEqual({ spentMicros: USD, reservedMicros: 0 });
  });

  it('settles each hold once: a release after a settle charges nothing more', () => {
    const budget = held(gateOn(store));

    budget.settle(true);
    budget.release();

    expect(store.read('acme', PERIOD)).toEqual({ spentMicros: USD, reservedMicros: 0 });
  });

  it('refuses a retry the cap cannot cover, holding nothing', () => {
    const budget = held(gateOn(store, 1));
    budget.settle(true);

    expect(budget.holdNext()).toBe(false);
    expect(store.read('acme', PERIOD)).toEqual({ spentMicros: USD, reservedMicros: 0 });
  });

  it('refuses a retry while the store is down, without throwing or rejecting', async () => {
    let down = false;
    const flaky: BudgetStore = {
      reserve: (...args) => (down ? Promise.reject(new Error('connection lost')) : store.reserve(...args)),
      settle: (...args) => store.settle(...args),
      renew: (...args) => store.renew(...args),
      read: (...args) => store.read(...args),
    };
    const budget = held(gateOn(flaky));
    budget.settle(true);
    down = true;

    await expect(budget.holdNext()).resolves.toBe(false);
  });
});
