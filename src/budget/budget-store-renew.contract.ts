import { type BudgetContractContext, COST, DAY, NEXT_DAY } from './budget-store-contract-context';

/**
 * The part of the `BudgetStore` contract about `renew`, run by `describeBudgetStore`
 * inside its own describe, so against every store it runs against.
 */
export function describeBudgetStoreRenew({ store, clock }: BudgetContractContext): void {
  describe('renew', () => {
    it('keeps a reservation past its original TTL, then lets it lapse at the renewed expiry', async () => {
      const subject = await store();
      await subject.reserve('acme', DAY, COST, 'r1', COST, 1_000);
      await clock().advanceAsync(800);

      await expect(subject.renew('acme', DAY, 'r1', 1_000)).resolves.toBe(true);

      await clock().advanceAsync(800);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
      await expect(subject.reserve('acme', DAY, COST, 'r2', 1, 1_000)).resolves.toMatchObject({
        ok: false,
        cause: 'held',
        nextLapseInMs: 200,
      });
      await clock().advanceAsync(199);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
      await clock().advanceAsync(1);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
      await expect(subject.settle('acme', DAY, 'r1', COST)).resolves.toBe(false);
    });

    it('never shortens a reservation: a renew for less than it has left keeps its expiry', async () => {
      const subject = await store();
      await subject.reserve('acme', DAY, COST, 'r1', COST, 10_000);
      await clock().advanceAsync(1_000);

      await expect(subject.renew('acme', DAY, 'r1', 2_000)).resolves.toBe(true);

      await expect(subject.reserve('acme', DAY, COST, 'r2', COST, 1_000)).resolves.toMatchObject({
        ok: false,
        cause: 'held',
        nextLapseInMs: 9_000,
      });
      await clock().advanceAsync(8_999);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
      await clock().advanceAsync(1);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
    });

    it('renews for a fractional TTL rounded up to whole milliseconds', async () => {
      const subject = await store();
      await subject.reserve('acme', DAY, COST, 'r1', COST, 1_000);

      await expect(subject.renew('acme', DAY, 'r1', 1_999.25)).resolves.toBe(true);

      await clock().advanceAsync(1_999);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
      await clock().advanceAsync(1);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
    });

    it('keeps the amount as it was: a renewed reservation settles normally, and charges once', async () => {
      const subject = await store();
      await subject.reserve('acme', DAY, 10 * COST, 'r1', COST, 1_000);
      await clock().advanceAsync(800);
      await subject.renew('acme', DAY, 'r1', 1_000);
      await clock().advanceAsync(800);

      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
      await expect(subject.settle('acme', DAY, 'r1', 700)).resolves.toBe(true);
      await expect(subject.settle('acme', DAY, 'r1', 700)).resolves.toBe(false);

      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 700, reservedMicros: 0 });
    });

    it('answers false for a settled reservation and changes nothing', async () => {
      const subject = await store();
      await subject.reserve('acme', DAY, COST, 'r1', COST, 1_000);
      await subject.settle('acme', DAY, 'r1', 600);

      await expect(subject.renew('acme', DAY, 'r1', 1_000)).resolves.toBe(false);

      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 600, reservedMicros: 0 });
      await expect(subject.settle('acme', DAY, 'r1', 600)).resolves.toBe(false);
      await expect(subject.reserve('acme', DAY, COST, 'r2', 400, 1_000)).resolves.toEqual({
        ok: true,
        spentMicros: 600,
        reservedMicros: 400,
      });
    });

    it('answers false for a lapsed reservation nothing swept yet, and does not hold it again', async () => {
      const subject = await store();
      await subject.reserve('acme', DAY, COST, 'r1', COST, 1_000);
      await clock().advanceAsync(1_000);

      await expect(subject.renew('acme', DAY, 'r1', 1_000)).resolves.toBe(false);

      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
      await expect(subject.reserve('acme', DAY, COST, 'r2', COST, 1_000)).resolves.toEqual({
        ok: true,
        spentMicros: 0,
        reservedMicros: COST,
      });
      await expect(subject.settle('acme', DAY, 'r1', COST)).resolves.toBe(false);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
    });

    it('answers false for an id, tenant or period never reserved, and changes nothing', async () => {
      const subject = await store();
      await subject.reserve('acme', DAY, 10 * COST, 'r1', COST, 1_000);

      await expect(subject.renew('acme', DAY, 'nobody', 60_000)).resolves.toBe(false);
      await expect(subject.renew('globex', DAY, 'r1', 60_000)).resolves.toBe(false);
      await expect(subject.renew('acme', NEXT_DAY, 'r1', 60_000)).resolves.toBe(false);

      await expect(subject.read('globex', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
      await expect(subject.read('acme', NEXT_DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
      await clock().advanceAsync(1_000);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
    });

    it('tells the renewed expiry in a held refusal once the earliest reservation was renewed', async () => {
      const subject = await store();
      await subject.reserve('acme', DAY, 2 * COST, 'first', COST, 10_000);
      await subject.reserve('acme', DAY, 2 * COST, 'second', COST, 60_000);
      await expect(subject.reserve('acme', DAY, 2 * COST, 'r1', COST, 1_000)).resolves.toMatchObject({
        cause: 'held',
        nextLapseInMs: 10_000,
      });

      await subject.renew('acme', DAY, 'first', 90_000);

      await expect(subject.reserve('acme', DAY, 2 * COST, 'r2', COST, 1_000)).resolves.toMatchObject({
        cause: 'held',
        nextLapseInMs: 60_000,
      });
      await clock().advanceAsync(10_000);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 2 * COST });
      await expect(subject.reserve('acme', DAY, 2 * COST, 'r3', COST, 1_000)).resolves.toMatchObject({
        cause: 'held',
        nextLapseInMs: 50_000,
      });
    });

    it('never leaves money reserved when renews and settles of the same reservations race', async () => {
      const subject = await store();
      const ids = Array.from({ length: 20 }, (_, index) => `r${index}`);
      for (const id of ids) await subject.reserve('acme', DAY, 100 * COST, id, COST, 1_000);

      // Half the renews are sent after their settle: they must not hold the money again.
      const race = (id: string, renewFirst: boolean): Promise<boolean> =>
        renewFirst
          ? Promise.all([subject.renew('acme', DAY, id, 60_000), subject.settle('acme', DAY, id, 300)]).then(
              ([, settled]) => settled,
            )
          : Promise.all([subject.settle('acme', DAY, id, 300), subject.renew('acme', DAY, id, 60_000)]).then(
              ([settled]) => settled,
            );

      const answers = await Promise.all(ids.map((id, index) => race(id, index % 2 === 0)));

      expect(answers).toEqual(ids.map(() => true));
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 20 * 300, reservedMicros: 0 });
      await clock().advanceAsync(60_000);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 20 * 300, reservedMicros: 0 });
      for (const id of ids) await expect(subject.renew('acme', DAY, id, 60_000)).resolves.toBe(false);
    });

    it.each<[string, { ttl?: number; id?: string }]>([
      ['a TTL of 0', { ttl: 0 }],
      ['a negative TTL', { ttl: -5 }],
      ['an infinite TTL', { ttl: Infinity }],
      ['a NaN TTL', { ttl: Number.NaN }],
      ['an empty reservation id', { id: '' }],
    ])('rejects %s with a RangeError and keeps the reservation as it was', async (_, { ttl = 60_000, id = 'r1' }) => {
      const subject = await store();
      await subject.reserve('acme', DAY, COST, 'r1', COST, 1_000);

      await expect(subject.renew('acme', DAY, id, ttl)).rejects.toThrow(RangeError);

      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: COST });
      await clock().advanceAsync(1_000);
      await expect(subject.read('acme', DAY)).resolves.toEqual({ spentMicros: 0, reservedMicros: 0 });
    });
  });
}
