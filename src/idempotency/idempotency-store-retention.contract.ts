import {
  type IdempotencyContractContext,
  LEASE_MS,
  RETENTION_MS,
  FP,
  OTHER_FP,
  SUCCESS,
  FAILURE,
  claimed,
  completed,
  TENANT,
} from './idempotency-store-contract-context';

/**
 * The part of the `IdempotencyStore` contract about retention: a completed outcome is replayed
 * for the `retentionMs` its completion asked for, counted from then.
 * Run by `describeIdempotencyStore` inside its own describe, so against every store it runs against.
 */
export function describeIdempotencyStoreRetention({ store, clock }: IdempotencyContractContext): void {
  describe('retention', () => {
    it('replays a completed outcome until retentionMs has passed, then lets the key be claimed again', async () => {
      const subject = await store();
      await completed(subject, 'key-a', SUCCESS);

      clock().advance(RETENTION_MS - 1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome: SUCCESS,
      });

      clock().advance(1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('forgets the fingerprint with the outcome: other arguments may use the key after retention', async () => {
      const subject = await store();
      await completed(subject, 'key-a', SUCCESS);

      clock().advance(RETENTION_MS - 1);
      await expect(subject.claim('key-a', OTHER_FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'conflict' });

      clock().advance(1);
      await expect(subject.claim('key-a', OTHER_FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('counts retention from the completion, not from the claim', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');
      clock().advance(3_000);
      await subject.complete('key-a', token, SUCCESS, RETENTION_MS);

      clock().advance(RETENTION_MS - 1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'completed' });

      clock().advance(1);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('uses the retentionMs each completion asks for', async () => {
      const subject = await store();
      const shortToken = await claimed(subject, 'key-short');
      const longToken = await claimed(subject, 'key-long');
      await subject.complete('key-long', longToken, SUCCESS, 10_000);
      await subject.complete('key-short', shortToken, FAILURE, 1_000);

      clock().advance(1_000);
      await expect(subject.claim('key-short', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
      await expect(subject.claim('key-long', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'completed' });

      clock().advance(9_000);
      await expect(subject.claim('key-long', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });
  });
}
