import {
  type IdempotencyContractContext,
  LEASE_MS,
  RETENTION_MS,
  FP,
  SUCCESS,
  FAILURE,
  claimed,
  TENANT,
} from './idempotency-store-contract-context';
import type { StoredOutcome } from './idempotency.store';

/**
 * The part of the `IdempotencyStore` contract about `complete`: the outcome stored exactly and
 * replayed, and only the current token of the key completing it.
 * Run by `describeIdempotencyStore` inside its own describe, so against every store it runs against.
 */
export function describeIdempotencyStoreComplete({ store }: IdempotencyContractContext): void {
  describe('complete', () => {
    it.each<[string, StoredOutcome]>([
      ['a success', SUCCESS],
      ['a success whose result is null', { ok: true, result: null, attempts: 1, pool: 'normal' }],
      ['a success whose result is a string', { ok: true, result: 'done', attempts: 1, pool: 'normal' }],
      ['an error with retryAfterMs', FAILURE],
      ['an error without retryAfterMs', { ok: false, kind: 'timeout', message: 'attempt timed out', attempts: 1 }],
      ['an error that never reached the handler', { ok: false, kind: 'circuit_open', message: 'open', attempts: 0 }],
    ])('stores %s and replays it exactly to the same fingerprint', async (_label, outcome) => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');

      await subject.complete('key-a', token, outcome, RETENTION_MS);

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome,
      });
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome,
      });
    });

    it('ignores a wrong token: the key stays in flight and the right token still completes it', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');

      await subject.complete('key-a', `${token}-not`, FAILURE, RETENTION_MS);
      await subject.complete('key-a', 'no-such-token', FAILURE, RETENTION_MS);

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      await subject.complete('key-a', token, SUCCESS, RETENTION_MS);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome: SUCCESS,
      });
    });

    it('ignores a token of another key', async () => {
      const subject = await store();
      const tokenA = await claimed(subject, 'key-a');
      await claimed(subject, 'key-b');

      await subject.complete('key-b', tokenA, FAILURE, RETENTION_MS);

      await expect(subject.claim('key-b', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
    });

    it('keeps the first outcome when the same token completes twice', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');

      await subject.complete('key-a', token, SUCCESS, RETENTION_MS);
      await subject.complete('key-a', token, FAILURE, RETENTION_MS);

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome: SUCCESS,
      });
    });

    it('ignores the stale token of a released claim once the key is claimed again', async () => {
      const subject = await store();
      const stale = await claimed(subject, 'key-a');
      await subject.release('key-a', stale);
      const fresh = await claimed(subject, 'key-a');

      expect(fresh).not.toBe(stale);
      await subject.complete('key-a', stale, FAILURE, RETENTION_MS);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });

      await subject.complete('key-a', fresh, SUCCESS, RETENTION_MS);
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome: SUCCESS,
      });
    });
  });
}
