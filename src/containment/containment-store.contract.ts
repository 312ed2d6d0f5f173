import type { ContainmentChange, ContainmentSnapshot } from './containment-snapshot';
import { promised } from '../common';
import type { ContainmentStore } from './containment.store';

/** Builds a fresh, empty store under test. */
export type MakeContainmentStore = () => ContainmentStore | Promise<ContainmentStore>;

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const SECOND = 1_000;

const NOT_CONTAINED: ContainmentChange = { state: 'not_contained', posture: 'degraded', reason: '' };
const ACTIVE_HARD: ContainmentChange = {
  state: 'active',
  posture: 'hard',
  reason: 'exfiltration suspected (INC-4412)',
};
const INDETERMINATE: ContainmentChange = { state: 'indeterminate', posture: 'degraded', reason: 'under review' };
const RELEASED: ContainmentChange = { state: 'released', posture: 'degraded', reason: 'cleared by security' };

/** A copy of a snapshot, to compare against later without trusting the original object. */
const copy = (snapshot: ContainmentSnapshot): ContainmentSnapshot => ({ ...snapshot });

/**
 * The contract every {@link ContainmentStore} keeps, asserted only through the interface, so
 * the same suite runs against the memory store and against Redis. Each test gets a fresh
 * store from `makeStore` and uses tenant names of its own.
 */
export function describeContainmentStore(name: string, makeStore: MakeContainmentStore): void {
  describe(`ContainmentStore contract: ${name}`, () => {
    const store = async () => promised(await makeStore());

    describe('read', () => {
      it('answers null for a tenant that was never written', async () => {
        const subject = await store();

        await expect(subject.read('acme')).resolves.toBeNull();
      });

      it('answers the latest write', async () => {
        const subject = await store();
        await subject.write('acme', ACTIVE_HARD, T0);
        await subject.write('acme', RELEASED, T0 + SECOND);

        await expect(subject.read('acme')).resolves.toEqual({
          tenant: 'acme',
          ...RELEASED,
          version: 2,
          updatedAt: new Date(T0 + SECOND).toISOString(),
        });
      });

      it("answers null for a tenant whose name differs only in case from a written one's", async () => {
        const subject = await store();
        await subject.write('acme', ACTIVE_HARD, T0);

        await expect(subject.read('ACME')).resolves.toBeNull();
      });
    });

    describe('write', () => {
      it('writes version 1 with the fields as written and updatedAt as the ISO time of atMs', async () => {
        const subject = await store();

        const written = await subject.write('acme', ACTIVE_HARD, T0 + 123);

        expect(written).toEqual({
          tenant: 'acme',
          state: 'active',
          posture: 'hard',
          reason: 'exfiltration suspected (INC-4412)',
          version: 1,
          updatedAt: '2026-01-01T12:00:00.123Z',
        });
        await expect(subject.read('acme')).resolves.toEqual(written);
      });

      it('grows the version by one with every write', async () => {
        const subject = await store();
        const versions: number[] = [];

        for (const [index, change] of [ACTIVE_HARD, INDETERMINATE, RELEASED, NOT_CONTAINED, ACTIVE_HARD].entries()) {
          versions.push((await subject.write('acme', change, T0 + index * SECOND)).version);
        }

        expect(versions).toEqual([1, 2, 3, 4, 5]);
        await expect(subject.read('acme')).resolves.toMatchObject({ version: 5, ...ACTIVE_HARD });
      });

      it('grows the version even when a write changes nothing', async () => {
        const subject = await store();

        await subject.write('acme', ACTIVE_HARD, T0);
        const again = await subject.write('acme', ACTIVE_HARD, T0);

        expect(again.version).toBe(2);
      });

      it('keeps versions per tenant, independent across tenants', async () => {
        const subject = await store();

        const acme1 = await subject.write('acme', ACTIVE_HARD, T0);
        const acme2 = await subject.write('acme', RELEASED, T0 + SECOND);
        const globex1 = await subject.write('globex', INDETERMINATE, T0 + 2 * SECOND);
        const acme3 = await subject.write('acme', NOT_CONTAINED, T0 + 3 * SECOND);
        const globex2 = await subject.write('globex', RELEASED, T0 + 4 * SECOND);

        expect([acme1.version, acme2.version, acme3.version]).toEqual([1, 2, 3]);
        expect([globex1.version, globex2.version]).toEqual([1, 2]);
        await expect(subject.read('acme')).resolves.toMatchObject({ tenant: 'acme', ...NOT_CONTAINED, version: 3 });
        await expect(subject.read('globex')).resolves.toMatchObject({ tenant: 'globex', ...RELEASED, version: 2 });
      });

      it('keeps every state and posture as written', async () => {
        const subject = await store();
        const changes: ContainmentChange[] = [];
        for (const state of ['not_contained', 'active', 'released', 'indeterminate'] as const) {
          for (const posture of ['hard', 'degraded'] as const)
            changes.push({ state, posture, reason: `${state}/${posture}` });
        }

        for (const [index, change] of changes.entries()) {
          const written = await subject.write('acme', change, T0 + index);
          expect(written).toMatchObject({ tenant: 'acme', ...change, version: index + 1 });
          await expect(subject.read('acme')).resolves.toEqual(written);
        }
      });

      it('keeps a reason of 500 characters with quotes, newlines and non-ASCII text intact', async () => {
        const reason = `"quoted" 'single' \\ back\nnew line — Ünïcödé 数据 `.padEnd(500, 'x');
        const subject = await store();

        await subject.write('acme', { ...ACTIVE_HARD, reason }, T0);

        await expect(subject.read('acme')).resolves.toMatchObject({ reason });
      });

      it('gives 20 concurrent writes to one tenant the versions 1 to 20, each once', async () => {
        const subject = await store();

        const written = await Promise.all(
          Array.from({ length: 20 }, (_, index) =>
            subject.write('acme', { ...ACTIVE_HARD, reason: `write ${index}` }, T0 + index),
          ),
        );

        const versions = written.map((snapshot) => snapshot.version).sort((a, b) => a - b);
        expect(versions).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
        const last = await subject.read('acme');
        expect(last?.version).toBe(20);
        // The stored snapshot is the one write that got version 20, whole.
        expect(last).toEqual(written.find((snapshot) => snapshot.version === 20));
      });

      it('numbers concurrent writes to two tenants independently', async () => {
        const subject = await store();

        const written = await Promise.all(
          Array.from({ length: 20 }, (_, index) =>
            subject.write(index % 2 === 0 ? 'acme' : 'globex', ACTIVE_HARD, T0 + index),
          ),
        );

        for (const tenant of ['acme', 'globex']) {
          const versions = written
            .filter((snapshot) => snapshot.tenant === tenant)
            .map((snapshot) => snapshot.version)
            .sort((a, b) => a - b);
          expect(versions).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        }
      });

      it('does not change a snapshot it returned when a later write comes', async () => {
        const subject = await store();
        const first = await subject.write('acme', ACTIVE_HARD, T0);
        const firstCopy = copy(first);
        const read = await subject.read('acme');
        const readCopy = copy(read!);

        await subject.write('acme', RELEASED, T0 + SECOND);
        await subject.write('acme', NOT_CONTAINED, T0 + 2 * SECOND);

        expect(first).toEqual(firstCopy);
        expect(read).toEqual(readCopy);
        expect(first.version).toBe(1);
        expect(read?.state).toBe('active');
      });

      it('does not change a seeded snapshot it returned when a later write comes', async () => {
        const subject = await store();
        const seeded = await subject.seed('acme', NOT_CONTAINED, T0);
        const seededCopy = copy(seeded);

        await subject.write('acme', ACTIVE_HARD, T0 + SECOND);

        expect(seeded).toEqual(seededCopy);
      });
    });

    describe('seed', () => {
      it('writes version 1 for a tenant without a snapshot', async () => {
        const subject = await store();

        const seeded = await subject.seed('acme', NOT_CONTAINED, T0);

        expect(seeded).toEqual({
          tenant: 'acme',
          ...NOT_CONTAINED,
          version: 1,
          updatedAt: new Date(T0).toISOString(),
        });
        await expect(subject.read('acme')).resolves.toEqual(seeded);
      });

      it("never overwrites an operator's write, and answers the operator's snapshot", async () => {
        const subject = await store();
        await subject.write('acme', ACTIVE_HARD, T0);
        const operators = await subject.write('acme', INDETERMINATE, T0 + SECOND);

        const seeded = await subject.seed('acme', NOT_CONTAINED, T0 + 2 * SECOND);

        expect(seeded).toEqual(operators);
        await expect(subject.read('acme')).resolves.toEqual(operators);
      });

      it('answers the existing snapshot on a second seed without changing it', async () => {
        const subject = await store();
        const first = await subject.seed('acme', NOT_CONTAINED, T0);

        const second = await subject.seed('acme', ACTIVE_HARD, T0 + SECOND);

        expect(second).toEqual(first);
        await expect(subject.read('acme')).resolves.toEqual(first);
      });

      it('lets a write after a seed continue from version 2', async () => {
        const subject = await store();
        await subject.seed('acme', NOT_CONTAINED, T0);

        const written = await subject.write('acme', ACTIVE_HARD, T0 + SECOND);

        expect(written.version).toBe(2);
      });

      it('seeds each tenant on its own', async () => {
        const subject = await store();
        await subject.write('acme', ACTIVE_HARD, T0);

        const globex = await subject.seed('globex', NOT_CONTAINED, T0 + SECOND);

        expect(globex).toMatchObject({ tenant: 'globex', ...NOT_CONTAINED, version: 1 });
        await expect(subject.read('acme')).resolves.toMatchObject({ ...ACTIVE_HARD, version: 1 });
      });

      it('gives concurrent seeds of one tenant one snapshot, version 1', async () => {
        const subject = await store();

        const seeded = await Promise.all(
          Array.from({ length: 10 }, (_, index) =>
            subject.seed('acme', { ...NOT_CONTAINED, reason: `replica ${index}` }, T0 + index),
          ),
        );

        const stored = await subject.read('acme');
        expect(stored?.version).toBe(1);
        for (const snapshot of seeded) expect(snapshot).toEqual(stored);
      });

      it("never overwrites an operator's write that races with seeds", async () => {
        const subject = await store();

        const [, written] = await Promise.all([
          subject.seed('acme', NOT_CONTAINED, T0),
          subject.write('acme', ACTIVE_HARD, T0 + 1),
          subject.seed('acme', NOT_CONTAINED, T0 + 2),
        ]);

        // Whatever the order, the operator's write is the latest change: no seed comes after it.
        await expect(subject.read('acme')).resolves.toEqual(written);
        expect(written.state).toBe('active');
      });
    });
  });
}
