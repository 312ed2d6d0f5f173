import {
  type IdempotencyContractContext,
  type IdempotencyContractOptions,
  LEASE_MS,
  RETENTION_MS,
  FP,
  OTHER_FP,
  TENANT,
  OTHER_TENANT,
  claimed,
} from './idempotency-store-contract-context';
import type { IdempotencyStore, StoredOutcome } from './idempotency.store';

/** A success whose JSON is exactly `bytes` long (ASCII), its result naming `label`. */
function sized(label: string, bytes: number): StoredOutcome {
  const bare = JSON.stringify({ ok: true, result: label, attempts: 1, pool: 'normal' }).length;
  if (bytes < bare) throw new Error(`an outcome labelled ${label} takes at least ${bare} bytes`);
  return { ok: true, result: label + '.'.repeat(bytes - bare), attempts: 1, pool: 'normal' };
}

async function completedAs(subject: IdempotencyStore, key: string, tenant: string, outcome: StoredOutcome) {
  const claim = await subject.claim(key, FP, LEASE_MS, tenant);
  if (claim.status !== 'claimed') throw new Error(`expected ${key} to be claimed, got ${claim.status}`);
  await subject.complete(key, claim.token, outcome, RETENTION_MS);
}

/** The answer to a repeat of a key whose call ran but whose outcome the store did not keep. */
function notKept(attempts: number) {
  return {
    status: 'completed',
    outcome: { ok: false, kind: 'idempotency_conflict', message: expect.stringContaining('too large'), attempts },
  };
}

/**
 * The part of the `IdempotencyStore` contract about bytes: an outcome over `maxEntryBytes` is not
 * kept and its key still never runs again (every store); past `maxBytesPerTenant` or `maxBytes`
 * the oldest outcomes go the same way (stores that bound bytes in all: memory).
 * Run by `describeIdempotencyStore` inside its own describe, so against every store it runs against.
 */
export function describeIdempotencyStoreBytes(
  { store, clock }: IdempotencyContractContext,
  options: IdempotencyContractOptions,
): void {
  const inAll = options.boundsBytesInAll ?? true;
  // Stores bounded by TTLs and the size of one outcome have no total to keep (see the Redis store).
  const itInAll: (name: string, test: jest.ProvidesCallback) => void = inAll ? it : () => undefined;
  describe('bytes', () => {
    it('keeps an outcome of exactly maxEntryBytes whole', async () => {
      const subject = await store({ maxEntryBytes: 300 });
      await completedAs(subject, 'key-a', TENANT, sized('a', 300));

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome: sized('a', 300),
      });
    });

    it('finishes a key whose outcome is over maxEntryBytes without it: a repeat is refused, never run', async () => {
      const subject = await store({ maxEntryBytes: 300 });
      const token = await claimed(subject, 'key-a');
      await subject.complete('key-a', token, { ...sized('a', 301), attempts: 3 }, RETENTION_MS);

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual(notKept(3));
      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual(notKept(3));
      await expect(subject.claim('key-a', OTHER_FP, LEASE_MS, TENANT)).resolves.toEqual({ status: 'conflict' });
    });

    it('counts bytes, not characters: a result of 100 three-byte characters is 300 bytes', async () => {
      const subject = await store({ maxEntryBytes: 300 });
      const bare = JSON.stringify({ ok: true, result: '', attempts: 1, pool: 'normal' }).length;
      const wide: StoredOutcome = { ok: true, result: '€'.repeat(100), attempts: 1, pool: 'normal' };
      const fits: StoredOutcome = {
        ok: true,
        result: '€'.repeat(Math.floor((300 - bare) / 3)),
        attempts: 1,
        pool: 'normal',
      };
      await completedAs(subject, 'key-wide', TENANT, wide);
      await completedAs(subject, 'key-fits', TENANT, fits);

      await expect(subject.claim('key-wide', FP, LEASE_MS, TENANT)).resolves.toEqual(notKept(1));
      await expect(subject.claim('key-fits', FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
        status: 'completed',
        outcome: fits,
      });
    });

    it('finishes a key whose outcome cannot be written as JSON without it', async () => {
      const subject = await store();
      const token = await claimed(subject, 'key-a');
      await subject.complete(
        'key-a',
        token,
        { ok: true, result: { big: 1n }, attempts: 2, pool: 'normal' },
        RETENTION_MS,
      );

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toEqual(notKept(2));
    });

    it('frees a key whose outcome was not kept once its retention passed', async () => {
      const subject = await store({ maxEntryBytes: 300 });
      await completedAs(subject, 'key-a', TENANT, sized('a', 301));
      clock().advance(RETENTION_MS);

      await expect(subject.claim('key-a', FP, LEASE_MS, TENANT)).resolves.toMatchObject({ status: 'claimed' });
    });

    itInAll(
      "drops a tenant's oldest outcomes past maxBytesPerTenant, keeping its keys and others' outcomes",
      async () => {
        const subject = await store({ maxBytesPerTenant: 1_000, maxBytes: 10_000, maxEntryBytes: 1_000 });
        await completedAs(subject, 'other-1', OTHER_TENANT, sized('other-1', 400));
        for (const key of ['key-1', 'key-2', 'key-3']) await completedAs(subject, key, TENANT, sized(key, 400));

        await expect(subject.claim('key-1', FP, LEASE_MS, TENANT)).resolves.toEqual(notKept(1));
        for (const key of ['key-2', 'key-3']) {
          await expect(subject.claim(key, FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
            status: 'completed',
            outcome: sized(key, 400),
          });
        }
        await expect(subject.claim('other-1', FP, LEASE_MS, OTHER_TENANT)).resolves.toStrictEqual({
          status: 'completed',
          outcome: sized('other-1', 400),
        });
      },
    );

    itInAll('drops the oldest outcomes of any tenant past maxBytes', async () => {
      const subject = await store({ maxBytesPerTenant: 1_000, maxBytes: 1_000, maxEntryBytes: 1_000 });
      await completedAs(subject, 'key-1', TENANT, sized('key-1', 400));
      await completedAs(subject, 'other-1', OTHER_TENANT, sized('other-1', 400));
      await completedAs(subject, 'other-2', OTHER_TENANT, sized('other-2', 400));

      await expect(subject.claim('key-1', FP, LEASE_MS, TENANT)).resolves.toEqual(notKept(1));
      for (const key of ['other-1', 'other-2']) {
        await expect(subject.claim(key, FP, LEASE_MS, OTHER_TENANT)).resolves.toMatchObject({
          status: 'completed',
          outcome: { ok: true },
        });
      }
    });

    itInAll('makes room again as outcomes expire', async () => {
      const subject = await store({ maxBytesPerTenant: 1_000, maxBytes: 1_000, maxEntryBytes: 1_000 });
      await completedAs(subject, 'key-1', TENANT, sized('key-1', 600));
      clock().advance(RETENTION_MS);
      await completedAs(subject, 'key-2', TENANT, sized('key-2', 600));
      await completedAs(subject, 'key-1', TENANT, sized('key-1', 300));

      for (const [key, bytes] of [
        ['key-2', 600],
        ['key-1', 300],
      ] as const) {
        await expect(subject.claim(key, FP, LEASE_MS, TENANT)).resolves.toStrictEqual({
          status: 'completed',
          outcome: sized(key, bytes),
        });
      }
    });
  });
}
