import type { Clock } from '../common';
import { FakeClock } from '../common/fake-clock';
import { describeBudgetStore } from './budget-store.contract';
import { MemoryBudgetStore } from './memory-budget.store';

const TTL_MS = 60_000;

describeBudgetStore('MemoryBudgetStore', (clock) => new MemoryBudgetStore(clock));

describe('MemoryBudgetStore', () => {
  it('keeps at most the last two periods a tenant reserved in', () => {
    const store = new MemoryBudgetStore(new FakeClock());

    for (const day of ['day:2026-01-01', 'day:2026-01-02', 'day:2026-01-03', 'day:2026-01-04']) {
      store.reserve('acme', day, 10_000, 'r1', 1_000, TTL_MS);
      store.settle('acme', day, 'r1', 1_000);
      expect(store.periodCount).toBeLessThanOrEqual(2);
    }

    expect(store.read('acme', 'day:2026-01-02')).toEqual({ spentMicros: 0, reservedMicros: 0 });
    expect(store.read('acme', 'day:2026-01-03')).toEqual({ spentMicros: 1_000, reservedMicros: 0 });
    expect(store.read('acme', 'day:2026-01-04')).toEqual({ spentMicros: 1_000, reservedMicros: 0 });
  });

  it('bounds the periods of each tenant on its own', () => {
    const store = new MemoryBudgetStore(new FakeClock());

    for (const tenant of ['acme', 'globex', 'initech']) {
      for (const day of ['day:2026-01-01', 'day:2026-01-02', 'day:2026-01-03']) {
        store.reserve(tenant, day, 10_000, 'r1', 1_000, TTL_MS);
      }
    }

    expect(store.periodCount).toBe(6);
  });

  it('drops a period that holds nothing once its last reservation is released or lapses', () => {
    const clock = new FakeClock();
    const store = new MemoryBudgetStore(clock);
    store.reserve('acme', 'day:2026-01-01', 10_000, 'released', 1_000, TTL_MS);
    store.reserve('globex', 'day:2026-01-01', 10_000, 'lapses', 1_000, TTL_MS);

    store.settle('acme', 'day:2026-01-01', 'released', 0);
    clock.advance(TTL_MS);
    store.read('globex', 'day:2026-01-01');

    expect(store.periodCount).toBe(0);
  });

  it('creates nothing when reading, refusing, settling or renewing unknown reservations', () => {
    const store = new MemoryBudgetStore(new FakeClock());

    store.read('acme', 'day:2026-01-01');
    store.reserve('acme', 'day:2026-01-01', 0, 'r1', 1, TTL_MS);
    store.settle('acme', 'day:2026-01-01', 'r1', 1_000);
    store.renew('acme', 'day:2026-01-01', 'r1', TTL_MS);
    store.renew('globex', 'day:2026-01-02', 'r1', TTL_MS);

    expect(store.periodCount).toBe(0);
  });

  it('drops the period of a lapsed reservation that a renew finds, answering false', () => {
    const clock = new FakeClock();
    const store = new MemoryBudgetStore(clock);
    store.reserve('acme', 'day:2026-01-01', 10_000, 'r1', 1_000, TTL_MS);
    clock.advance(TTL_MS);

    expect(store.renew('acme', 'day:2026-01-01', 'r1', TTL_MS)).toBe(false);

    expect(store.periodCount).toBe(0);
  });

  it('lapses reservations after their TTL of monotonic time, whatever the wall clock does', () => {
    const monotonic = new FakeClock();
    let wallMs = Date.UTC(2026, 0, 1);
    // The wall clock steps back an hour (an NTP correction) while the monotonic clock runs on.
    const clock: Clock = {
      now: () => monotonic.now(),
      wallNow: () => wallMs,
      setTimer: (callback, delayMs) => monotonic.setTimer(callback, delayMs),
      clearTimer: (handle) => monotonic.clearTimer(handle),
    };
    const store = new MemoryBudgetStore(clock);
    store.reserve('acme', 'day:2026-01-01', 1_000, 'r1', 1_000, TTL_MS);

    wallMs -= 3_600_000;
    monotonic.advance(TTL_MS);

    expect(store.read('acme', 'day:2026-01-01')).toEqual({ spentMicros: 0, reservedMicros: 0 });
  });

  it('answers at once, without a promise: a budgeted call waits for nothing', () => {
    const store = new MemoryBudgetStore(new FakeClock());

    expect(store.reserve('acme', 'day:2026-01-01', 1_000, 'r1', 400, TTL_MS)).toEqual({
      ok: true,
      spentMicros: 0,
      reservedMicros: 400,
    });
    expect(store.renew('acme', 'day:2026-01-01', 'r1', TTL_MS)).toBe(true);
    expect(store.settle('acme', 'day:2026-01-01', 'r1', 300)).toBe(true);
    expect(store.renew('acme', 'day:2026-01-01', 'r1', TTL_MS)).toBe(false);
    expect(store.read('acme', 'day:2026-01-01')).toEqual({ spentMicros: 300, reservedMicros: 0 });
  });

  it('keeps its money to itself: two stores do not share tenants', () => {
    const first = new MemoryBudgetStore(new FakeClock());
    const second = new MemoryBudgetStore(new FakeClock());

    first.reserve('acme', 'day:2026-01-01', 1_000, 'r1', 1_000, TTL_MS);

    expect(second.read('acme', 'day:2026-01-01')).toEqual({ spentMicros: 0, reservedMicros: 0 });
  });
});
