import {
  type IdempotencyContractContext,
  type IdempotencyContractOptions,
  LEASE_MS,
  RETENTION_MS,
  FP,
  OTHER_FP,
  SUCCESS,
  FAILURE,
  succeeded,
  claimed,
  completed,
  TENANT,
} from './idempotency-store-contract-context';

/**
 * The part of the `IdempotencyStore` contract about its bound: the oldest completed keys go
 * first (for a store bounded by a count of keys), and nothing in flight is ever evicted.
 * Run by `describeIdempotencyStore` inside its own describe, so against every store it runs against.
 */
export function describeIdempotencyStoreBound(
  { store }: IdempotencyContractContext,
  options: IdempotencyContractOptions,
): void {
  const byCount = options.evictsByCount ?? true;
  // Only a store bounded by a count of keys can evict by one; TTLs bound the others, for which
  // these tests do not exist (rather than show as skipped in every run).
  const itEvicting: (name: string, test: jest.ProvidesCallback) => void = byCount ? it : () => undefined;
  describe('bound', () => {
    itEvicting('evicts the oldest completed keys once more than maxEntries are completed', async () => {
      const maxEntries = 3;
      const subject = await store({ maxEntries });
      const keys = ['key-1', 'key-2', 'key-3', 'key-4', 'key-5'];
      for (const key of keys) await completed(subject, key, succeeded(key));

      // The survivors first: claiming an evicted key claims it, and that claim takes a place.
      for (const key of ['key-3', 'key-4', 'key-5']) {
        await expect(subject.claim(key, FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
          status: 'completed',
          outcome: succeeded(key),
        });
      }
      await expect(subject.claim('key-1', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    itEvicting('evicts the second-oldest completed key too once two more than maxEntries are completed', async () => {
      const subject = await store({ maxEntries: 3 });
      for (const key of ['key-1', 'key-2', 'key-3', 'key-4', 'key-5']) await completed(subject, key);

      await expect(subject.claim('key-2', OTHER_FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('keeps exactly maxEntries completed keys when nothing is in flight', async () => {
      const subject = await store({ maxEntries: 3 });
      for (const key of ['key-1', 'key-2', 'key-3']) await completed(subject, key);

      for (const key of ['key-1', 'key-2', 'key-3']) {
        await expect(subject.claim(key, FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'completed' });
      }
    });

    itEvicting('evicts in completion order, not claim order', async () => {
      const subject = await store({ maxEntries: 2 });
      const early = await claimed(subject, 'claimed-first');
      const late = await claimed(subject, 'claimed-second');
      await subject.complete('claimed-second', late, SUCCESS, RETENTION_MS);
      await subject.complete('claimed-first', early, SUCCESS, RETENTION_MS);

      await completed(subject, 'key-3');

      await expect(subject.claim('claimed-first', FP, LEASE_MS, TENANT)).resolves.toMatchObject({
        status: 'completed',
      });
      await expect(subject.claim('claimed-second', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    it('never evicts an in-flight key, however many keys complete after it', async () => {
      const maxEntries = 3;
      const subject = await store({ maxEntries });
      const tokenA = await claimed(subject, 'running-a');
      const tokenB = await claimed(subject, 'running-b', OTHER_FP);
      for (let index = 0; index < 4 * maxEntries; index++) await completed(subject, `done-${index}`);

      await expect(subject.claim('running-a', FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      await expect(subject.claim('running-b', OTHER_FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      await expect(subject.claim('running-a', OTHER_FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'conflict' });
      await expect(subject.claim(`done-${4 * maxEntries - 1}`, FP, LEASE_MS, TENANT)).resolves.toMatchObject({
        status: 'completed',
      });

      // Their tokens still hold: each completes with its own outcome.
      await subject.complete('running-a', tokenA, SUCCESS, RETENTION_MS);
      await subject.complete('running-b', tokenB, FAILURE, RETENTION_MS);
      await expect(subject.claim('running-a', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome: SUCCESS,
      });
      await expect(subject.claim('running-b', OTHER_FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome: FAILURE,
      });
    });

    it('keeps in-flight keys when there are more of them than maxEntries', async () => {
      const subject = await store({ maxEntries: 2 });
      const running = ['running-1', 'running-2', 'running-3', 'running-4'];
      for (const key of running) await claimed(subject, key);
      await completed(subject, 'done-1');

      for (const key of running) {
        await expect(subject.claim(key, FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'in_flight' });
      }
    });
  });
}
