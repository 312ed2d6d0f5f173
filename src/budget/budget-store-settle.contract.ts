import { type BudgetContractContext, DAY, NEXT_DAY, TTL_MS, COST } from './budget-store-contract-context';

/**
 * The part of the `BudgetStore` contract about `settle`: the actual amount charged once,
 * the rest of the reservation freed.
 * Run by `describeBudgetStore` inside its own describe, so against every store it runs against.
 */
export function describeBudgetStoreSettle({ store }: BudgetContractContext): void {
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
}
