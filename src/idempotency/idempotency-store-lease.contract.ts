import {
  type IdempotencyContractContext,
  LEASE_MS,
  RETENTION_MS,
  FP,
  OTHER_FP,
  SUCCESS,
  FAILURE,
  claimed,
  TENANT,
} from './idempotency-store-contract-context';
import type { IdempotencyClaim } from './idempotency.store';

/**
 * The part of the `IdempotencyStore` contract about the lease: an in-flight claim is held for
 * `leaseMs`, then another claim may take it over, and the old token holds nothing.
 * Run by `describeIdempotencyStore` inside its own describe, so against every store it runs against.
 */
export function describeIdempotencyStoreLease({ store, clock }: IdempotencyContractContext): void {
  describe('lease', () => {
    it('holds an in-flight claim for leaseMs, then lets another claim take it over with a new token', async () => {
      const subject = await store();
      const first = await claimed(subject, 'key-a');

      clock().advance(LEASE_MS - 1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });

      clock().advance(1);
      const takeover = await subject.claim('key-a', FP, LEASE_MS, TENANT);
      expect(takeover).toMatchObject({ status: 'claimed' });
      expect((takeover as Extract<IdempotencyClaim, { status: 'claimed' }>).token).not.toBe(first);
    });

    it('ignores the old token after a takeover: its complete and release change nothing', async () => {
      const subject = await store();
      const old = await claimed(subject, 'key-a');
      clock().advance(LEASE_MS);
      const current = await claimed(subject, 'key-a');

      await subject.complete('key-a', old, FAILURE, RETENTION_MS);
      await subject.release('key-a', old);

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      await subject.complete('key-a', current, SUCCESS, RETENTION_MS);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome: SUCCESS,
      });
    });

    it('gives the taken-over claim a lease of its own', async () => {
      const subject = await store();
      await claimed(subject, 'key-a');
      clock().advance(LEASE_MS);
      await claimed(subject, 'key-a');

      clock().advance(LEASE_MS - 1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      clock().advance(1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('lets other arguments take over a claim whose lease passed', async () => {
      const subject = await store();
      await claimed(subject, 'key-a');

      clock().advance(LEASE_MS);

      await expect(subject.claim('key-a', OTHER_FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'conflict' });
    });
  });
}
