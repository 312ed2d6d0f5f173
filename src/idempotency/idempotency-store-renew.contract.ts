import {
  claimed,
  FP,
  type IdempotencyContractContext,
  LEASE_MS,
  OTHER_FP,
  RETENTION_MS,
  TENANT,
} from './idempotency-store-contract-context';
import type { StoredOutcome } from './idempotency.store';

const SUCCESS: StoredOutcome = { ok: true, result: { id: 'ord_1' }, attempts: 1, pool: 'normal' };

/**
 * The part of the `IdempotencyStore` contract about `renew`, run by
 * `describeIdempotencyStore` inside its own describe, so against every store it runs against.
 */
export function describeIdempotencyStoreRenew({ store, clock }: IdempotencyContractContext): void {
  describe('renew', () => {
    it('keeps the claim past its lease: a second claim then answers in_flight, until the renewed lease passes', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');
      clock().advance(4_000);

      await expect(subject.renew('key-a', token, LEASE_MS)).resolves.toBe(true);

      clock().advance(4_000);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      await expect(subject.claim('key-a', OTHER_FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'conflict' });
      clock().advance(999);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      clock().advance(1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('renews again and again, each time for leaseMs from then', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');

      for (let round = 0; round < 5; round++) {
        clock().advance(LEASE_MS - 1);
        await expect(subject.renew('key-a', token, LEASE_MS)).resolves.toBe(true);
      }

      clock().advance(LEASE_MS - 1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
    });

    it('never shortens the lease: a renew for less than is left keeps it as it was', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');

      await expect(subject.renew('key-a', token, 1_000)).resolves.toBe(true);

      clock().advance(LEASE_MS - 1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      clock().advance(1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('stores the outcome when the renewed claim completes, kept for retentionMs from then', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');
      clock().advance(4_000);
      await subject.renew('key-a', token, LEASE_MS);
      clock().advance(4_000);

      await subject.complete('key-a', token, SUCCESS, RETENTION_MS);

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome: SUCCESS,
      });
      clock().advance(RETENTION_MS - 1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'completed' });
      clock().advance(1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('answers false for a wrong token and leaves the lease as it was', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');

      await expect(subject.renew('key-a', `${token}-not`, 60_000)).resolves.toBe(false);
      await expect(subject.renew('key-a', 'no-such-token', 60_000)).resolves.toBe(false);

      clock().advance(LEASE_MS - 1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      clock().advance(1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('answers false for a token of another key', async () => {
      const subject = await store();
      const tokenA = await claimed(subject, 'key-a');
      await claimed(subject, 'key-b');

      await expect(subject.renew('key-b', tokenA, 60_000)).resolves.toBe(false);

      clock().advance(LEASE_MS);
      await expect(subject.claim('key-b', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('answers false after complete, keeping the outcome and its retention', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');
      await subject.complete('key-a', token, SUCCESS, RETENTION_MS);

      await expect(subject.renew('key-a', token, 10 * RETENTION_MS)).resolves.toBe(false);

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome: SUCCESS,
      });
      clock().advance(RETENTION_MS);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('answers false after release, holding nothing again', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');
      await subject.release('key-a', token);

      await expect(subject.renew('key-a', token, LEASE_MS)).resolves.toBe(false);

      await expect(subject.claim('key-a', OTHER_FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('answers false to the stale token of a released claim once the key is claimed again', async () => {
      const subject = await store();
      const stale = await claimed(subject, 'key-a');
      await subject.release('key-a', stale);
      await claimed(subject, 'key-a');

      await expect(subject.renew('key-a', stale, 60_000)).resolves.toBe(false);

      clock().advance(LEASE_MS);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('answers false once the lease lapsed, even before anyone took it over, and does not revive it', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');
      clock().advance(LEASE_MS);

      await expect(subject.renew('key-a', token, LEASE_MS)).resolves.toBe(false);

      const takeover = await subject.claim('key-a', OTHER_FP, LEASE_MS, TENANT);
      expect(takeover).toMatchObject({ status: 'claimed' });
      await subject.complete('key-a', token, SUCCESS, RETENTION_MS);
      await expect(subject.claim('key-a', OTHER_FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
    });

    it('answers false to the old token after a takeover, leaving the new lease as it was', async () => {
      const subject = await store();
      const old = await claimed(subject, 'key-a');
      clock().advance(LEASE_MS);
      const current = await claimed(subject, 'key-a');

      await expect(subject.renew('key-a', old, 60_000)).resolves.toBe(false);

      clock().advance(LEASE_MS - 1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      await expect(subject.renew('key-a', current, LEASE_MS)).resolves.toBe(true);
    });

    it('answers false for a key never claimed, and claims nothing', async () => {
      const subject = await store();

      await expect(subject.renew('key-a', 'no-such-token', LEASE_MS)).resolves.toBe(false);

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it.each([
      ['a lease of 0', 0],
      ['a negative lease', -5],
      ['an infinite lease', Infinity],
      ['a NaN lease', Number.NaN],
    ])('rejects %s with a RangeError and keeps the claim as it was', async (_, leaseMs) => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');

      await expect(subject.renew('key-a', token, leaseMs)).rejects.toThrow(RangeError);

      clock().advance(LEASE_MS - 1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      clock().advance(1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });
  });
}
