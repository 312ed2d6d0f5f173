import { type BudgetContractContext, DAY, TTL_MS, COST } from './budget-store-contract-context';

/**
 * The part of the `BudgetStore` contract about reservations lapsing after their own TTL.
 * Run by `describeBudgetStore` inside its own describe, so against every store it runs against.
 */
export function describeBudgetStoreLapse({ store, clock }: BudgetContractContext): void {
  describe('lapse', () => {
    it('holds a reservation until just before its TTL has passed', async () => {
      const subject = await store();
      await subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS);

      await clock().advanceAsync(TTL_MS - 1);

      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
      await expect(subject.reserve('acme', DAY, COST, 'r2', 1, TTL_MS)).resolves.toMatchObject({ ok: false });
    });

    it('frees a lapsed reservation for new reserves', async () => {
      const subject = await store();
      await subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS);

      await clock().advanceAsync(TTL_MS + 1);

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
      await clock().advanceAsync(TTL_MS + 1);

      await expect(subject.settle('acme', DAY, 'r1', COST)).resolves.toBe(false);

      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
    });

    it('lapses each reservation after its own TTL, keeping what was spent', async () => {
      const subject = await store();
      await subject.reserve('acme', DAY, 10 * COST, 'paid', COST, TTL_MS);
      await subject.settle('acme', DAY, 'paid', COST);
      await subject.reserve('acme', DAY, 10 * COST, 'short', COST, 1_000);
      await subject.reserve('acme', DAY, 10 * COST, 'long', 2 * COST, 5_000);

      await clock().advanceAsync(1_000);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: COST, reservedMicros: 2 * COST });

      await clock().advanceAsync(4_000);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: COST, reservedMicros: 0 });
      await expect(subject.settle('acme', DAY, 'long', 2 * COST)).resolves.toBe(false);
    });

    it('holds a reservation with a fractional TTL for that TTL rounded up to whole milliseconds', async () => {
      const subject = await store();
      await subject.reserve('acme', DAY, COST, 'r1', COST, 999.25);

      await clock().advanceAsync(999);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });

      await clock().advanceAsync(1);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
    });

    it('lets a reserve replace an id whose reservation lapsed', async () => {
      const subject = await store();
      await subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS);
      await clock().advanceAsync(TTL_MS);

      await expect(subject.reserve('acme', DAY, COST, 'r1', COST, TTL_MS)).resolves.toMatchObject({ ok: true });
      await expect(subject.settle('acme', DAY, 'r1', 400)).resolves.toBe(true);

      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 400, reservedMicros: 0 });
    });
  });
}
