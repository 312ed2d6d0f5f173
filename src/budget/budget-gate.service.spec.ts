import { ResilienceError } from '../common';
import { FakeClock } from '../common/fake-clock';
import { BudgetGate, type BudgetReservation } from './budget-gate.service';
import type { BudgetStore } from './budget.store';
import { MemoryBudgetStore } from './memory-budget.store';

/** 21:30 UTC: the day ends 2.5 hours later. */
const WALL_START = Date.UTC(2026, 2, 14, 21, 30);
const UNTIL_MIDNIGHT_MS = Date.UTC(2026, 2, 15) - WALL_START;
const HOLD_MS = 40_000;

describe('BudgetGate', () => {
  let clock: FakeClock;
  let gate: BudgetGate;

  beforeEach(() => {
    clock = new FakeClock(WALL_START);
    gate = new BudgetGate(new MemoryBudgetStore(clock), { budgets: { period: 'day', tenants: { acme: 3 } } }, clock);
  });

  function reserve(costUsd: number, holdMs = HOLD_MS, retryAfterMaxMs?: number): BudgetReservation {
    const reservation = gate.reserve('acme', costUsd, holdMs, retryAfterMaxMs);
    if (!reservation || !('id' in reservation)) throw new Error('expected a reservation held at once');
    return reservation;
  }

  function refusal(costUsd: number, retryAfterMaxMs?: number): ResilienceError {
    try {
      gate.reserve('acme', costUsd, HOLD_MS, retryAfterMaxMs);
    } catch (error) {
      expect(error).toBeInstanceOf(ResilienceError);
      return error as ResilienceError;
    }
    throw new Error('expected budget_exceeded');
  }

  it('reserves nothing for a tenant without a cap or a cost of nothing', () => {
    expect(gate.reserve('globex', 1, HOLD_MS)).toBeUndefined();
    expect(gate.reserve('acme', 0, HOLD_MS)).toBeUndefined();
  });

  it('refuses until the period ends when what is spent leaves no room', () => {
    gate.settle(reserve(1), 1);
    gate.settle(reserve(1), 1);
    reserve(0.5);

    const error = refusal(1.5);

    expect(error.kind).toBe('budget_exceeded');
    expect(error.message).toBe('the daily budget of this tenant cannot cover this call');
    expect(error.retryAfterMs).toBe(UNTIL_MIDNIGHT_MS);
  });

  it('refuses until the earliest hold lapses when only money held by calls in flight is in the way', () => {
    reserve(1, 30_000);
    clock.advance(10_000);
    reserve(2, 25_000);

    const error = refusal(1);

    expect(error.kind).toBe('budget_exceeded');
    expect(error.message).toBe('the daily budget of this tenant is held by calls in flight; retry once they settle');
    expect(error.retryAfterMs).toBe(20_000);
  });

  it('bounds a refusal caused by holds in flight by the caller’s bound, and by a second from below', () => {
    reserve(3, HOLD_MS);

    expect(refusal(1, 5_000).retryAfterMs).toBe(5_000);
    clock.advance(HOLD_MS);
    reserve(3, 200);
    expect(refusal(1, 5_000).retryAfterMs).toBe(1_000);
  });

  it('never says to wait past the end of the period for a refusal caused by holds in flight', () => {
    clock.advance(UNTIL_MIDNIGHT_MS - 1_500);
    reserve(3, HOLD_MS);

    expect(refusal(1).retryAfterMs).toBe(1_500);
  });

  it('lets a call in once the hold in its way settles, well before the period ends', () => {
    const held = reserve(3);
    expect(refusal(1, 5_000).retryAfterMs).toBe(5_000);

    gate.settle(held, 1);

    expect(reserve(1).amountMicros).toBe(1_000_000);
  });

  describe('renew', () => {
    it('keeps a reservation past its hold, answering true at once (no promise) on the memory store', () => {
      const held = reserve(3);
      clock.advance(HOLD_MS - 1);

      expect(gate.renew(held, HOLD_MS)).toBe(true);

      clock.advance(HOLD_MS - 1);
      expect(refusal(1, 5_000).retryAfterMs).toBe(1_000);
      gate.settle(held, 2);
      expect(gate.spentMicros.get('acme')).toBe(2_000_000);
    });

    it('answers false for a reservation that is gone: settled or lapsed', () => {
      const settled = reserve(1);
      gate.settle(settled, 1);
      const lapsed = reserve(1, 1_000);
      clock.advance(1_000);

      expect(gate.renew(settled, HOLD_MS)).toBe(false);
      expect(gate.renew(lapsed, HOLD_MS)).toBe(false);
      expect(reserve(2).amountMicros).toBe(2_000_000);
    });

    describe('when the store fails', () => {
      const reservation: BudgetReservation = { tenant: 'acme', period: 'day:2026-03-14', id: 'r1', amountMicros: 1 };

      function gateOn(renew: BudgetStore['renew']): BudgetGate {
        const memory = new MemoryBudgetStore(clock);
        const store: BudgetStore = {
          reserve: (...args) => memory.reserve(...args),
          settle: (...args) => memory.settle(...args),
          read: (...args) => memory.read(...args),
          renew,
        };
        return new BudgetGate(store, { budgets: { period: 'day', tenants: { acme: 3 } } }, clock);
      }

      function thrownBy(act: () => unknown): unknown {
        try {
          act();
        } catch (error) {
          return error;
        }
        throw new Error('expected a throw');
      }

      it('rejects unavailable, not false, when the store rejects', async () => {
        const cause = new Error('connection lost');
        const failing = gateOn(() => Promise.reject(cause));

        await expect(failing.renew(reservation, HOLD_MS)).rejects.toMatchObject({ kind: 'unavailable', cause });
      });

      it('throws unavailable when the store throws at once', () => {
        const failing = gateOn(() => {
          throw new Error('broken');
        });

        expect(thrownBy(() => failing.renew(reservation, HOLD_MS))).toMatchObject({ kind: 'unavailable' });
      });

      it('answers the store’s promised answer when it answers later', async () => {
        const later = gateOn(() => Promise.resolve(false));

        await expect(later.renew(reservation, HOLD_MS)).resolves.toBe(false);
      });

      it('throws internal for a TTL the store refuses as impossible', () => {
        expect(thrownBy(() => gate.renew(reserve(1), 0))).toMatchObject({ kind: 'internal' });
      });
    });
  });
});
