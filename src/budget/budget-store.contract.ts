import { promised } from '../../test/support/promised';
import { FakeClock } from '../common/fake-clock';
import type { BudgetStore } from './budget.store';
import { describeBudgetStoreRenew } from './budget-store-renew.contract';

/** Builds a fresh, empty store under test whose time is `clock`. */
export type MakeBudgetStore = (clock: FakeClock) => BudgetStore | Promise<BudgetStore>;

const DAY = 'day:2026-01-01';
const NEXT_DAY = 'day:2026-01-02';
const TTL_MS = 60_000;
/** One call's cost: 0.001 USD. */
const COST = 1_000;

/**
 * The contract every {@link BudgetStore} keeps, asserted only through the interface and with
 * time moved only through the {@link FakeClock} handed to `makeStore`, so the same suite runs
 * against the memory store and against Redis.
 */
export function describeBudgetStore(name: string, makeStore: MakeBudgetStore): void {
  describe(`BudgetStore contract: ${name}`, () => {
    let clock: FakeClock;

    beforeEach(() => {
      clock = new FakeClock();
    });

    const store = async () => promised(await makeStore(clock));

    describe('reserve', () => {
      it('reserves within the cap and answers the usage with the reservation in it', async () => {
        const subject = await store();

        const result = await subject.reserve('acme', DAY, 10 * COST, 'r1', COST, TTL_MS);

        expect(result).toEqual({ ok: true, spentMicros: 0, reservedMicros: COST });
        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
      });

      it('reserves up to exactly the cap', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 3 * COST, 'r1', 2 * COST, TTL_MS);

        const result = await subject.reserve('acme', DAY, 3 * COST, 'r2', COST, TTL_MS);

        expect(result).toEqual({ ok: true, spentMicros: 0, reservedMicros: 3 * COST });
      });

      it('refuses an amount over the cap and reserves nothing', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 3 * COST, 'r1', 2 * COST, TTL_MS);

        const result = await subject.reserve('acme', DAY, 3 * COST, 'r2', COST + 1, TTL_MS);

        expect(result).toEqual({
          ok: false,
          cause: 'held',
          nextLapseInMs: TTL_MS,
          spentMicros: 0,
          reservedMicros: 2 * COST,
        });
        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 2 * COST });
        await expect(subject.settle('acme', DAY, 'r2', 0)).resolves.toBe(false);
      });

      it('refuses a first amount larger than the whole cap, leaving the period empty', async () => {
        const subject = await store();

        const result = await subject.reserve('acme', DAY, COST, 'r1', COST + 1, TTL_MS);

        expect(result).toEqual({ ok: false, cause: 'cap', spentMicros: 0, reservedMicros: 0 });
        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
      });

      it('counts what is spent against the cap', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 1_000, 'r1', 700, TTL_MS);
        await subject.settle('acme', DAY, 'r1', 700);

        const over = await subject.reserve('acme', DAY, 1_000, 'r2', 301, TTL_MS);
        const fits = await subject.reserve('acme', DAY, 1_000, 'r3', 300, TTL_MS);

        expect(over).toEqual({ ok: false, cause: 'cap', spentMicros: 700, reservedMicros: 0 });
        expect(fits).toEqual({ ok: true, spentMicros: 700, reservedMicros: 300 });
      });

      it('admits an amount of 0 within the cap, and refuses even 0 once the spent money is over it', async () => {
        const subject = await store();
        await expect(subject.reserve('acme', DAY, 0, 'r1', 0, TTL_MS)).resolves.toMatchObject({ ok: true });
        await subject.reserve('acme', DAY, 1_000, 'r2', 1_000, TTL_MS);
        await subject.settle('acme', DAY, 'r2', 1_500);

        await expect(subject.reserve('acme', DAY, 1_000, 'r3', 0, TTL_MS)).resolves.toEqual({
          ok: false,
          cause: 'cap',
          spentMicros: 1_500,
          reservedMicros: 0,
        });
      });

      it('admits exactly 3 of 10 concurrent reserves against a cap of 3 calls', async () => {
        const subject = await store();

        const results = await Promise.all(
          Array.from({ length: 10 }, (_, index) => subject.reserve('acme', DAY, 3 * COST, `r${index}`, COST, TTL_MS)),
        );

        expect(results.filter((result) => result.ok)).toHaveLength(3);
        expect(results.filter((result) => !result.ok)).toHaveLength(7);
        for (const result of results) expect(result.reservedMicros).toBeLessThanOrEqual(3 * COST);
        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 3 * COST });
      });

      it('never overspends under concurrent reserves and settles of varying amounts', async () => {
        const subject = await store();
        const cap = 10_000;
        const amounts = Array.from({ length: 40 }, (_, index) => 250 + ((index * 137) % 700));

        const settled = await Promise.all(
          amounts.map(async (amount, index) => {
            const result = await subject.reserve('acme', DAY, cap, `r${index}`, amount, TTL_MS);
            if (!result.ok) return 0;
            await subject.settle('acme', DAY, `r${index}`, amount);
            return amount;
          }),
        );

        const usage = await subject.read('acme', DAY);
        expect(usage).toEqual({ spentMicros: settled.reduce((sum, amount) => sum + amount, 0), reservedMicros: 0 });
        expect(usage.spentMicros).toBeLessThanOrEqual(cap);
        expect(usage.spentMicros).toBeGreaterThan(cap - 950);
      });

      it('replaces the amount of a reservation id that still holds, never holding it twice', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 3 * COST, 'r1', 2 * COST, TTL_MS);

        const again = await subject.reserve('acme', DAY, 3 * COST, 'r1', 3 * COST, TTL_MS);

        expect(again).toEqual({ ok: true, spentMicros: 0, reservedMicros: 3 * COST });
        await expect(subject.settle('acme', DAY, 'r1', COST)).resolves.toBe(true);
        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: COST, reservedMicros: 0 });
      });

      it('keeps a reservation as it was when reserving its id again is refused', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 3 * COST, 'r1', 2 * COST, TTL_MS);

        const again = await subject.reserve('acme', DAY, 3 * COST, 'r1', 4 * COST, TTL_MS);

        expect(again).toEqual({ ok: false, cause: 'cap', spentMicros: 0, reservedMicros: 2 * COST });
        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 2 * COST });
      });

      it.each<[string, Partial<{ amount: number; cap: number; ttl: number; id: string }>]>([
        ['a negative amount', { amount: -1 }],
        ['a fractional amount', { amount: 0.5 }],
        ['an amount beyond 2^53', { amount: 2 ** 53 }],
        ['a NaN cap', { cap: Number.NaN }],
        ['a negative cap', { cap: -1 }],
        ['a TTL of 0', { ttl: 0 }],
        ['an infinite TTL', { ttl: Infinity }],
        ['a negative TTL', { ttl: -5 }],
        ['an empty reservation id', { id: '' }],
      ])(
        'rejects %s with a RangeError and reserves nothing',
        async (_, { amount = COST, cap = 10 * COST, ttl = TTL_MS, id = 'r1' }) => {
          const subject = await store();

          await expect(subject.reserve('acme', DAY, cap, id, amount, ttl)).rejects.toThrow(RangeError);
          await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
        },
      );
    });

    describe('why a reserve is refused', () => {
      it('answers cap when what is spent leaves no room, whatever is held', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 3 * COST, 'paid', COST, TTL_MS);
        await subject.settle('acme', DAY, 'paid', COST);
        await subject.reserve('acme', DAY, 3 * COST, 'held', COST, TTL_MS);

        const result = await subject.reserve('acme', DAY, 3 * COST, 'r1', 2 * COST + 1, TTL_MS);

        expect(result).toEqual({ ok: false, cause: 'cap', spentMicros: COST, reservedMicros: COST });
      });

      it('answers held, with when the earliest reservation lapses, when the amount fits but for what is held', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 3 * COST, 'paid', COST, TTL_MS);
        await subject.settle('acme', DAY, 'paid', COST);
        await subject.reserve('acme', DAY, 3 * COST, 'late', COST, 50_000);
        await subject.reserve('acme', DAY, 3 * COST, 'early', 1, 20_000);
        await clock.advanceAsync(5_000);

        const result = await subject.reserve('acme', DAY, 3 * COST, 'r1', 2 * COST, TTL_MS);

        expect(result).toEqual({
          ok: false,
          cause: 'held',
          nextLapseInMs: 15_000,
          spentMicros: COST,
          reservedMicros: COST + 1,
        });
      });

      it('answers held up to exactly the cap: spent + amount equal to it would fit', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 2 * COST, 'held', 1, TTL_MS);

        await expect(subject.reserve('acme', DAY, 2 * COST, 'r1', 2 * COST, TTL_MS)).resolves.toMatchObject({
          ok: false,
          cause: 'held',
        });
        await expect(subject.reserve('acme', DAY, 2 * COST, 'r2', 2 * COST + 1, TTL_MS)).resolves.toMatchObject({
          ok: false,
          cause: 'cap',
        });
      });

      it('tells the next lapse of those still held once the earliest one has settled', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 2 * COST, 'first', COST, 10_000);
        await subject.reserve('acme', DAY, 2 * COST, 'second', COST, 60_000);
        await subject.settle('acme', DAY, 'first', 0);

        const result = await subject.reserve('acme', DAY, 2 * COST, 'r1', 2 * COST, TTL_MS);

        expect(result).toMatchObject({ ok: false, cause: 'held', nextLapseInMs: 60_000 });
      });

      it('tells the next lapse once the earliest reservation was reserved again for longer', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 2 * COST, 'first', COST, 10_000);
        await subject.reserve('acme', DAY, 2 * COST, 'second', COST, 60_000);
        await subject.reserve('acme', DAY, 2 * COST, 'first', COST, 90_000);

        const result = await subject.reserve('acme', DAY, 2 * COST, 'r1', 2 * COST, TTL_MS);

        expect(result).toMatchObject({ ok: false, cause: 'held', nextLapseInMs: 60_000 });
      });

      it('tells the next lapse of those still held once the earliest one has lapsed', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 2 * COST, 'first', COST, 10_000);
        await subject.reserve('acme', DAY, 2 * COST, 'second', COST, 60_000);
        await clock.advanceAsync(10_000);
        await subject.reserve('acme', DAY, 2 * COST, 'third', COST, 30_000);

        const result = await subject.reserve('acme', DAY, 2 * COST, 'r1', 2 * COST, TTL_MS);

        expect(result).toMatchObject({ ok: false, cause: 'held', nextLapseInMs: 30_000 });
      });

      it('admits exactly what fits when concurrent calls hold one attempt at a time, and never overspends', async () => {
        const subject = await store();
        const cap = 3 * COST;
        // Ten calls of up to three attempts each; an attempt fails unless it is a call's third.
        const attemptsMade = await Promise.all(
          Array.from({ length: 10 }, async (_, call) => {
            let made = 0;
            for (let attempt = 1; attempt <= 3; attempt++) {
              const id = `c${call}-a${attempt}`;
              const held = await subject.reserve('acme', DAY, cap, id, COST, TTL_MS);
              if (!held.ok) break;
              made++;
              await subject.settle('acme', DAY, id, COST);
            }
            return made;
          }),
        );

        const usage = await subject.read('acme', DAY);
        expect(usage).toEqual({ spentMicros: cap, reservedMicros: 0 });
        expect(attemptsMade.reduce((sum, made) => sum + made, 0)).toBe(3);
      });
    });

    describe('settle', () => {
      it('charges the actual amount and frees the rest of the reservation', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 10 * COST, 'r1', 1_000, TTL_MS);

        await expect(subject.settle('acme', DAY, 'r1', 300)).resolves.toBe(true);

        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 300, reservedMicros: 0 });
      });

      it('releases the whole reservation when settled with 0, making room for another', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS);

        await expect(subject.settle('acme', DAY, 'r1', 0)).resolves.toBe(true);

        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
        await expect(subject.reserve('acme', DAY, COST, 'r2', COST, TTL_MS)).resolves.toMatchObject({ ok: true });
      });

      it('charges once when settled twice, and answers false the second time', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 10 * COST, 'r1', COST, TTL_MS);

        await expect(subject.settle('acme', DAY, 'r1', 600)).resolves.toBe(true);
        await expect(subject.settle('acme', DAY, 'r1', 600)).resolves.toBe(false);

        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 600, reservedMicros: 0 });
      });

      it('charges once when the same reservation is settled concurrently', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 10 * COST, 'r1', COST, TTL_MS);

        const answers = await Promise.all(Array.from({ length: 5 }, () => subject.settle('acme', DAY, 'r1', COST)));

        expect(answers.filter(Boolean)).toHaveLength(1);
        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: COST, reservedMicros: 0 });
      });

      it('answers false and charges nothing for an unknown reservation id', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 10 * COST, 'r1', COST, TTL_MS);

        await expect(subject.settle('acme', DAY, 'nobody', 500)).resolves.toBe(false);
        await expect(subject.settle('globex', DAY, 'r1', 500)).resolves.toBe(false);
        await expect(subject.settle('acme', NEXT_DAY, 'r1', 500)).resolves.toBe(false);

        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
        await expect(subject.read('globex', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
        await expect(subject.read('acme', NEXT_DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
      });

      it('charges an actual amount above the reservation as it is', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 2_000, 'r1', 1_000, TTL_MS);

        await expect(subject.settle('acme', DAY, 'r1', 1_500)).resolves.toBe(true);

        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 1_500, reservedMicros: 0 });
        await expect(subject.reserve('acme', DAY, 2_000, 'r2', 501, TTL_MS)).resolves.toMatchObject({ ok: false });
      });

      it('adds up many charges exactly', async () => {
        const subject = await store();
        for (let index = 0; index < 10; index++) {
          await subject.reserve('acme', DAY, 10 ** 12, `r${index}`, 100_001, TTL_MS);
          await subject.settle('acme', DAY, `r${index}`, 100_001);
        }

        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 1_000_010, reservedMicros: 0 });
      });

      it.each([
        ['a negative actual amount', -1],
        ['a fractional actual amount', 0.5],
        ['an infinite actual amount', Infinity],
      ])('rejects %s with a RangeError and keeps the reservation', async (_, actual) => {
        const subject = await store();
        await subject.reserve('acme', DAY, 10 * COST, 'r1', COST, TTL_MS);

        await expect(subject.settle('acme', DAY, 'r1', actual)).rejects.toThrow(RangeError);

        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
      });
    });

    describe('lapse', () => {
      it('holds a reservation until just before its TTL has passed', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS);

        await clock.advanceAsync(TTL_MS - 1);

        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
        await expect(subject.reserve('acme', DAY, COST, 'r2', 1, TTL_MS)).resolves.toMatchObject({ ok: false });
      });

      it('frees a lapsed reservation for new reserves', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS);

        await clock.advanceAsync(TTL_MS + 1);

        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
        await expect(subject.reserve('acme', DAY, COST, 'r2', COST, TTL_MS)).resolves.toEqual({
          ok: true,
          spentMicros: 0,
          reservedMicros: COST,
        });
      });

      it('charges nothing for a late settle of a lapsed reservation', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS);
        await clock.advanceAsync(TTL_MS + 1);

        await expect(subject.settle('acme', DAY, 'r1', COST)).resolves.toBe(false);

        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
      });

      it('lapses each reservation after its own TTL, keeping what was spent', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 10 * COST, 'paid', COST, TTL_MS);
        await subject.settle('acme', DAY, 'paid', COST);
        await subject.reserve('acme', DAY, 10 * COST, 'short', COST, 1_000);
        await subject.reserve('acme', DAY, 10 * COST, 'long', 2 * COST, 5_000);

        await clock.advanceAsync(1_000);
        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: COST, reservedMicros: 2 * COST });

        await clock.advanceAsync(4_000);
        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: COST, reservedMicros: 0 });
        await expect(subject.settle('acme', DAY, 'long', 2 * COST)).resolves.toBe(false);
      });

      it('holds a reservation with a fractional TTL for that TTL rounded up to whole milliseconds', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, COST, 'r1', COST, 999.25);

        await clock.advanceAsync(999);
        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });

        await clock.advanceAsync(1);
        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
      });

      it('lets a reserve replace an id whose reservation lapsed', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS);
        await clock.advanceAsync(TTL_MS);

        await expect(subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS)).resolves.toMatchObject({ ok: true });
        await expect(subject.settle('acme', DAY, 'r1', 400)).resolves.toBe(true);

        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 400, reservedMicros: 0 });
      });
    });

    describe('periods and tenants', () => {
      it('keeps each period on its own', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS);
        await subject.settle('acme', DAY, 'r1', COST);

        const next = await subject.reserve('acme', NEXT_DAY, COST, 'r1', COST, TTL_MS);

        expect(next).toEqual({ ok: true, spentMicros: 0, reservedMicros: COST });
        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: COST, reservedMicros: 0 });
      });

      it('settles a reservation in its own period after the next period has begun', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, 10 * COST, 'late', COST, TTL_MS);
        await subject.reserve('acme', NEXT_DAY, 10 * COST, 'early', COST, TTL_MS);

        await expect(subject.settle('acme', DAY, 'late', 700)).resolves.toBe(true);

        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 700, reservedMicros: 0 });
        await expect(subject.read('acme', NEXT_DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
      });

      it('keeps each tenant on its own, even with the same reservation ids', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS);

        const globex = await subject.reserve('globex', DAY, COST, 'r1', COST, TTL_MS);
        await subject.settle('globex', DAY, 'r1', 250);

        expect(globex).toEqual({ ok: true, spentMicros: 0, reservedMicros: COST });
        await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
        await expect(subject.read('globex', DAY)).resolves.toEqual({ spentMicros: 250, reservedMicros: 0 });
      });

      it('keeps month and day periods apart', async () => {
        const subject = await store();
        await subject.reserve('acme', 'month:2026-01', COST, 'r1', COST, TTL_MS);

        await expect(subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS)).resolves.toMatchObject({ ok: true });
      });

      it('reads zeros for a tenant or period never used', async () => {
        const subject = await store();
        await subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS);

        await expect(subject.read('nobody', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
        await expect(subject.read('acme', 'day:2025-12-31')).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
      });
    });

    describeBudgetStoreRenew({ store, clock: () => clock });
  });
}
