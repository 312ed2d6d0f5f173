import { type BudgetContractContext, DAY, TTL_MS, COST } from './budget-store-contract-context';

/**
 * The part of the `BudgetStore` contract about `reserve`: the cap, concurrent reserves,
 * a reservation id reserved again, and the arguments it refuses.
 * Run by `describeBudgetStore` inside its own describe, so against every store it runs against.
 */
export function describeBudgetStoreReserve({ store }: BudgetContractContext): void {
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
}
