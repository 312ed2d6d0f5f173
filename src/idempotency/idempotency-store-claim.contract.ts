import {
  type IdempotencyContractContext,
  LEASE_MS,
  FP,
  OTHER_FP,
  SUCCESS,
  claimed,
  completed,
  TENANT,
} from './idempotency-store-contract-context';
import type { IdempotencyClaim } from './idempotency.store';

/**
 * The part of the `IdempotencyStore` contract about `claim`: one claim runs, the same arguments
 * wait (`in_flight`), other arguments conflict.
 * Run by `describeIdempotencyStore` inside its own describe, so against every store it runs against.
 */
export function describeIdempotencyStoreClaim({ store }: IdempotencyContractContext): void {
  describe('claim', () => {
    it('claims a free key and hands out a token', async () => {
      const subject = await store();

      const claim = await subject.claim('key-a', FP, LEASE_MS, TENANT);

      expect(claim.status).toBe('claimed');
      expect((claim as Extract<IdempotencyClaim, { status: 'claimed' }>).token).toEqual(expect.any(String));
      expect((claim as Extract<IdempotencyClaim, { status: 'claimed' }>).token).not.toBe('');
    });

    it('answers in_flight to a second claim with the same fingerprint while the first runs', async () => {
      const subject = await store();
      await claimed(subject, 'key-a');

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
    });

    it('answers conflict to another fingerprint while the key is in flight', async () => {
      const subject = await store();
      await claimed(subject, 'key-a');

      await expect(subject.claim('key-a', OTHER_FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'conflict' });
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
    });

    it('answers conflict to another fingerprint after the key completed, and still replays to the first', async () => {
      const subject = await store();
      await completed(subject, 'key-a', SUCCESS);

      await expect(subject.claim('key-a', OTHER_FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'conflict' });
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome: SUCCESS,
      });
    });

    it('keeps keys apart: one key in flight or completed leaves another free', async () => {
      const subject = await store();
      const tokenA = await claimed(subject, 'key-a');
      const tokenB = await claimed(subject, 'key-b', OTHER_FP);
      await completed(subject, 'key-c');

      expect(tokenA).not.toBe(tokenB);
      await expect(subject.claim('key-d', OTHER_FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });
  });
}
