import {
  type IdempotencyContractContext,
  LEASE_MS,
  RETENTION_MS,
  FP,
  OTHER_FP,
  FAILURE,
  claimed,
  TENANT,
} from './idempotency-store-contract-context';

/**
 * The part of the `IdempotencyStore` contract about `release`: the current token forgets the
 * claim, any other token changes nothing.
 * Run by `describeIdempotencyStore` inside its own describe, so against every store it runs against.
 */
export function describeIdempotencyStoreRelease({ store }: IdempotencyContractContext): void {
  describe('release', () => {
    it('forgets the claim: the key can be claimed again and nothing is stored', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');

      await subject.release('key-a', token);

      // Another fingerprint claims it too: no record of the released call is left to conflict with.
      await expect(subject.claim('key-a', OTHER_FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('lets the same arguments run again after a release', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');

      await subject.release('key-a', token);

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('ignores a wrong token: the key stays in flight', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');

      await subject.release('key-a', `${token}-not`);
      await subject.release('key-a', 'no-such-token');

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
    });

    it('ignores the stale token of an earlier claim once the key is claimed again', async () => {
      const subject = await store();
      const stale = await claimed(subject, 'key-a');
      await subject.release('key-a', stale);
      await claimed(subject, 'key-a');

      await subject.release('key-a', stale);

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
    });

    it('does not forget a completed outcome when its token releases it afterwards', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');
      await subject.complete('key-a', token, FAILURE, RETENTION_MS);

      await subject.release('key-a', token);

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome: FAILURE,
      });
    });
  });
}
