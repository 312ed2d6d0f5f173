import type { FakeClock } from '../common/fake-clock';
import type { IdempotencyBounds } from './idempotency-bounds';
import type { IdempotencyStore, StoredOutcome } from './idempotency.store';

/**
 * What each part of the {@link IdempotencyStore} contract takes from `describeIdempotencyStore`:
 * a fresh store within `bounds` (roomy where not given), and the clock it runs on, both per test.
 */
export interface IdempotencyContractContext {
  store: (bounds?: Partial<IdempotencyBounds>) => Promise<IdempotencyStore>;
  clock: () => FakeClock;
}

/**
 * What a store's bounds are: a count of keys and bytes in all and per tenant (memory), or TTLs
 * and the size of one outcome alone (Redis).
 */
export interface IdempotencyContractOptions {
  /** The store evicts its oldest finished keys beyond `maxEntries`. @default true */
  evictsByCount?: boolean;
  /** The store drops its oldest outcomes beyond `maxBytes` and `maxBytesPerTenant`. @default true */
  boundsBytesInAll?: boolean;
}

/** The tenant of the contract's keys, where a test has no other. */
export const TENANT = 'tenant-a';
export const OTHER_TENANT = 'tenant-b';

export const LEASE_MS = 5_000;
export const RETENTION_MS = 60_000;

export const FP = 'fingerprint-of-the-arguments';
export const OTHER_FP = 'fingerprint-of-other-arguments';

export const SUCCESS: StoredOutcome = {
  ok: true,
  result: { id: 'ord_1', lines: [1, 'two', null, { deep: { flag: true } }], empty: {} },
  attempts: 2,
  pool: 'isolated',
};
export const FAILURE: StoredOutcome = {
  ok: false,
  kind: 'transient',
  message: 'upstream answered 503',
  attempts: 3,
  retryAfterMs: 1500,
};

/** A success whose result names its key, to tell outcomes apart. */
export const succeeded = (result: unknown): StoredOutcome => ({ ok: true, result, attempts: 1, pool: 'normal' });

/** Claims `key`, which must be free, and answers the claim's token. */
export async function claimed(subject: IdempotencyStore, key: string, fingerprint = FP): Promise<string> {
  const claim = await subject.claim(key, fingerprint, LEASE_MS, TENANT);
  if (claim.status !== 'claimed') throw new Error(`expected ${key} to be claimed, got ${claim.status}`);
  return claim.token;
}

/** Claims `key` and completes it with `outcome`, kept for {@link RETENTION_MS}. */
export async function completed(
  subject: IdempotencyStore,
  key: string,
  outcome: StoredOutcome = SUCCESS,
): Promise<void> {
  const token = await claimed(subject, key);
  await subject.complete(key, token, outcome, RETENTION_MS);
}
