import { type BudgetContractContext, DAY, NEXT_DAY, TTL_MS, COST } from './budget-store-contract-context';

/**
 * The part of the `BudgetStore` contract about keeping periods and tenants apart.
 * Run by `describeBudgetStore` inside its own describe, so against every store it runs against.
 */
export function describeBudgetStorePeriods({ store }: BudgetContractContext): void {
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
}
