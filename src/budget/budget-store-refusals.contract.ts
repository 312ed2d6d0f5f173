import { type BudgetContractContext, DAY, TTL_MS, COST } from './budget-store-contract-context';

/**
 * The part of the `BudgetStore` contract about why a reserve is refused: `cap` when what
 * is spent leaves no room, `held` (with when the earliest reservation lapses) when what is held does.
 * Run by `describeBudgetStore` inside its own describe, so against every store it runs against.
 */
export function describeBudgetStoreRefusals({ store, clock }: BudgetContractContext): void {
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
      await clock().advanceAsync(5_000);

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
      await clock().advanceAsync(10_000);
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
}
