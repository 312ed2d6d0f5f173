import {
  type IdempotencyContractContext,
  LEASE_MS,
  FP,
  OTHER_FP,
  SUCCESS,
  claimed,
  completed,
  TENANT,
  RETENTION_MS,
} from './idempotency-store-contract-context';
import type { IdempotencyClaim } from './idempotency.store';

/**
 * The part of the `IdempotencyStore` contract about `claim`: one claim runs, the same arguments
 * wait (`in_flight`), other arguments conflict.
 * Run by `describeIdempotencyStore` inside its own describe, so against every store it runs against.
 */
export function describeIdempotencyStoreClaim({ store, clock }: IdempotencyContractContext): void {
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

    it('answers claimed to a claim re-sent with its own token, and in_flight to any other token', async () => {
      const subject = await store();
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT, 'token-1')).resolves.toEqual({
        status: 'claimed',
        token: 'token-1',
      });

      // Its reply was lost and the client sent it again: the same claim, not a second call.
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT, 'token-1')).resolves.toEqual({
        status: 'claimed',
        token: 'token-1',
      });
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT, 'token-2')).resolves.toEqual({ status: 'in_flight' });
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      await expect(subject.claim('key-a', OTHER_FP, LEASE_MS, TENANT, 'token-1')).resolves.toEqual({
        status: 'conflict',
      });
      await expect(subject.renew('key-a', 'token-1', LEASE_MS)).resolves.toBe(true);
    });

    it('answers a re-sent claim as any other once its key completed or its lease lapsed', async () => {
      const subject = await store();
      await subject.claim('key-a', FP, LEASE_MS, TENANT, 'token-1');
      await subject.complete('key-a', 'token-1', SUCCESS, RETENTION_MS);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT, 'token-1')).resolves.toStrictEqual({
        status: 'completed',
        outcome: SUCCESS,
      });

      await subject.claim('key-b', FP, LEASE_MS, TENANT, 'token-2');
      await subject.release('key-b', 'token-2');
      await subject.claim('key-b', FP, LEASE_MS, TENANT, 'token-3');
      await expect(subject.claim('key-b', FP, LEASE_MS, TENANT, 'token-2')).resolves.toEqual({ status: 'in_flight' });
      clock().advance(LEASE_MS);
      // Lapsed: the re-sent claim takes the key like any claim, with its own token.
      await expect(subject.claim('key-b', FP, LEASE_MS, TENANT, 'token-2')).resolves.toEqual({
        status: 'claimed',
        token: 'token-2',
      });
      await expect(subject.renew('key-b', 'token-3', LEASE_MS)).resolves.toBe(false);
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
