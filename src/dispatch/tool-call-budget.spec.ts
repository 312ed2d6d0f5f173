import { BudgetGate, type BudgetStore, MemoryBudgetStore } from '../budget';
import { ResilienceError } from '../common';
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
    return new BudgetGate(budgetStore, { budgets: { period: 'day', tenants: { acme: acmeUsd }, prices: {} } }, clock);
  }

  function held(gate: BudgetGate): ToolCallBudget {
    const budget = ToolCallBudget.holdFirst(gate, 'acme', 1, TIMES);
    if (!(budget instanceof ToolCallBudget)) throw new Error('expected the first attempt held at once');
    return budget;
  }

  it('holds nothing for a tenant without a cap', () => {
    expect(ToolCallBudget.holdFirst(gateOn(store), 'globex', 1, TIMES)).toBeUndefined();
  });

  it('refuses the first attempt budget_exceeded, with the caller’s bound on a refusal caused by holds in flight', () => {
    const gate = gateOn(store, 1);
    held(gate);

    expect(() => ToolCallBudget.holdFirst(gate, 'acme', 1, TIMES)).toThrow(
      expect.objectContaining({ kind: 'budget_exceeded', retryAfterMs: TIMES.retryAfterMaxMs }),
    );
  });

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
      read: (...args) => store.read(...args),
    };
    const budget = held(gateOn(flaky));
    budget.settle(true);
    down = true;

    await expect(budget.holdNext()).resolves.toBe(false);
  });
});
