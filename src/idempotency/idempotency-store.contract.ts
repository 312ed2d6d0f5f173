import { FakeClock } from '../common/fake-clock';
import type { IdempotencyClaim, IdempotencyStore, StoredOutcome } from './idempotency.store';
import { describeIdempotencyStoreRenew } from './idempotency-store-renew.contract';

/** Builds the store under test on the given clock, holding at most `maxEntries` keys. */
export type MakeIdempotencyStore = (
  clock: FakeClock,
  maxEntries: number,
) => IdempotencyStore | Promise<IdempotencyStore>;

const LEASE_MS = 5_000;
const RETENTION_MS = 60_000;
/** A bound no test without its own bound comes near. */
const ROOMY = 1_000;

const FP = 'fingerprint-of-the-arguments';
const OTHER_FP = 'fingerprint-of-other-arguments';

const SUCCESS: StoredOutcome = {
  ok: true,
  result: { id: 'ord_1', lines: [1, 'two', null, { deep: { flag: true } }], empty: {} },
  attempts: 2,
  pool: 'isolated',
};
const FAILURE: StoredOutcome = {
  ok: false,
  kind: 'transient',
  message: 'upstream answered 503',
  attempts: 3,
  retryAfterMs: 1500,
};

/** A success whose result names its key, to tell outcomes apart. */
const succeeded = (result: unknown): StoredOutcome => ({ ok: true, result, attempts: 1, pool: 'normal' });

/**
 * The contract every {@link IdempotencyStore} keeps, asserted only through the interface and
 * with time moved only through the {@link FakeClock} handed to `makeStore`, so the same suite
 * runs against the memory store and against Redis.
 */
/** What a store's bound is: a count of keys (memory), or TTLs alone (Redis). */
export interface IdempotencyContractOptions {
  /** The store evicts its oldest finished keys beyond `maxEntries`. @default true */
  evictsByCount?: boolean;
}

export function describeIdempotencyStore(
  name: string,
  makeStore: MakeIdempotencyStore,
  options: IdempotencyContractOptions = {},
): void {
  const byCount = options.evictsByCount ?? true;
  // Only a store bounded by a count of keys can evict by one; TTLs bound the others, for which
  // these tests do not exist (rather than show as skipped in every run).
  const itEvicting: (name: string, test: jest.ProvidesCallback) => void = byCount ? it : () => undefined;
  describe(`IdempotencyStore contract: ${name}`, () => {
    let clock: FakeClock;

    beforeEach(() => {
      clock = new FakeClock();
    });

    const store = (maxEntries = ROOMY) => Promise.resolve(makeStore(clock, maxEntries));

    async function claimed(subject: IdempotencyStore, key: string, fingerprint = FP): Promise<string> {
      const claim = await subject.claim(key, fingerprint, LEASE_MS);
      if (claim.status !== 'claimed') throw new Error(`expected ${key} to be claimed, got ${claim.status}`);
      return claim.token;
    }

    async function completed(subject: IdempotencyStore, key: string, outcome: StoredOutcome = SUCCESS): Promise<void> {
      const token = await claimed(subject, key);
      await subject.complete(key, token, outcome, RETENTION_MS);
    }

    describe('claim', () => {
      it('claims a free key and hands out a token', async () => {
        const subject = await store();

        const claim = await subject.claim('key-a', FP, LEASE_MS);

        expect(claim.status).toBe('claimed');
        expect((claim as Extract<IdempotencyClaim, { status: 'claimed' }>).token).toEqual(expect.any(String));
        expect((claim as Extract<IdempotencyClaim, { status: 'claimed' }>).token).not.toBe('');
      });

      it('answers in_flight to a second claim with the same fingerprint while the first runs', async () => {
        const subject = await store();
        await claimed(subject, 'key-a');

        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });
      });

      it('answers conflict to another fingerprint while the key is in flight', async () => {
        const subject = await store();
        await claimed(subject, 'key-a');

        await expect(subject.claim('key-a', OTHER_FP, LEASE_MS)).resolves.toEqual({ status: 'conflict' });
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });
      });

      it('answers conflict to another fingerprint after the key completed, and still replays to the first', async () => {
        const subject = await store();
        await completed(subject, 'key-a', SUCCESS);

        await expect(subject.claim('key-a', OTHER_FP, LEASE_MS)).resolves.toEqual({ status: 'conflict' });
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toStrictEqual({
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
        await expect(subject.claim('key-d', OTHER_FP, LEASE_MS)).resolves.toMatchObject({ status: 'claimed' });
      });
    });

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

        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toStrictEqual({ status: 'completed', outcome });
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toStrictEqual({ status: 'completed', outcome });
      });

      it('ignores a wrong token: the key stays in flight and the right token still completes it', async () => {
        const subject = await store();
        const token = await claimed(subject, 'key-a');

        await subject.complete('key-a', `${token}-not`, FAILURE, RETENTION_MS);
        await subject.complete('key-a', 'no-such-token', FAILURE, RETENTION_MS);

        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });
        await subject.complete('key-a', token, SUCCESS, RETENTION_MS);
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toStrictEqual({
          status: 'completed',
          outcome: SUCCESS,
        });
      });

      it('ignores a token of another key', async () => {
        const subject = await store();
        const tokenA = await claimed(subject, 'key-a');
        await claimed(subject, 'key-b');

        await subject.complete('key-b', tokenA, FAILURE, RETENTION_MS);

        await expect(subject.claim('key-b', FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });
      });

      it('keeps the first outcome when the same token completes twice', async () => {
        const subject = await store();
        const token = await claimed(subject, 'key-a');

        await subject.complete('key-a', token, SUCCESS, RETENTION_MS);
        await subject.complete('key-a', token, FAILURE, RETENTION_MS);

        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toStrictEqual({
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
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });

        await subject.complete('key-a', fresh, SUCCESS, RETENTION_MS);
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toStrictEqual({
          status: 'completed',
          outcome: SUCCESS,
        });
      });
    });

    describe('release', () => {
      it('forgets the claim: the key can be claimed again and nothing is stored', async () => {
        const subject = await store();
        const token = await claimed(subject, 'key-a');

        await subject.release('key-a', token);

        // Another fingerprint claims it too: no record of the released call is left to conflict with.
        await expect(subject.claim('key-a', OTHER_FP, LEASE_MS)).resolves.toMatchObject({ status: 'claimed' });
      });

      it('lets the same arguments run again after a release', async () => {
        const subject = await store();
        const token = await claimed(subject, 'key-a');

        await subject.release('key-a', token);

        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toMatchObject({ status: 'claimed' });
      });

      it('ignores a wrong token: the key stays in flight', async () => {
        const subject = await store();
        const token = await claimed(subject, 'key-a');

        await subject.release('key-a', `${token}-not`);
        await subject.release('key-a', 'no-such-token');

        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });
      });

      it('ignores the stale token of an earlier claim once the key is claimed again', async () => {
        const subject = await store();
        const stale = await claimed(subject, 'key-a');
        await subject.release('key-a', stale);
        await claimed(subject, 'key-a');

        await subject.release('key-a', stale);

        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });
      });

      it('does not forget a completed outcome when its token releases it afterwards', async () => {
        const subject = await store();
        const token = await claimed(subject, 'key-a');
        await subject.complete('key-a', token, FAILURE, RETENTION_MS);

        await subject.release('key-a', token);

        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toStrictEqual({
          status: 'completed',
          outcome: FAILURE,
        });
      });
    });

    describe('retention', () => {
      it('replays a completed outcome until retentionMs has passed, then lets the key be claimed again', async () => {
        const subject = await store();
        await completed(subject, 'key-a', SUCCESS);

        clock.advance(RETENTION_MS - 1);
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toStrictEqual({
          status: 'completed',
          outcome: SUCCESS,
        });

        clock.advance(1);
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toMatchObject({ status: 'claimed' });
      });

      it('forgets the fingerprint with the outcome: other arguments may use the key after retention', async () => {
        const subject = await store();
        await completed(subject, 'key-a', SUCCESS);

        clock.advance(RETENTION_MS - 1);
        await expect(subject.claim('key-a', OTHER_FP, LEASE_MS)).resolves.toEqual({ status: 'conflict' });

        clock.advance(1);
        await expect(subject.claim('key-a', OTHER_FP, LEASE_MS)).resolves.toMatchObject({ status: 'claimed' });
      });

      it('counts retention from the completion, not from the claim', async () => {
        const subject = await store();
        const token = await claimed(subject, 'key-a');
        clock.advance(3_000);
        await subject.complete('key-a', token, SUCCESS, RETENTION_MS);

        clock.advance(RETENTION_MS - 1);
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toMatchObject({ status: 'completed' });

        clock.advance(1);
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toMatchObject({ status: 'claimed' });
      });

      it('uses the retentionMs each completion asks for', async () => {
        const subject = await store();
        const shortToken = await claimed(subject, 'key-short');
        const longToken = await claimed(subject, 'key-long');
        await subject.complete('key-long', longToken, SUCCESS, 10_000);
        await subject.complete('key-short', shortToken, FAILURE, 1_000);

        clock.advance(1_000);
        await expect(subject.claim('key-short', FP, LEASE_MS)).resolves.toMatchObject({ status: 'claimed' });
        await expect(subject.claim('key-long', FP, LEASE_MS)).resolves.toMatchObject({ status: 'completed' });

        clock.advance(9_000);
        await expect(subject.claim('key-long', FP, LEASE_MS)).resolves.toMatchObject({ status: 'claimed' });
      });
    });

    describe('lease', () => {
      it('holds an in-flight claim for leaseMs, then lets another claim take it over with a new token', async () => {
        const subject = await store();
        const first = await claimed(subject, 'key-a');

        clock.advance(LEASE_MS - 1);
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });

        clock.advance(1);
        const takeover = await subject.claim('key-a', FP, LEASE_MS);
        expect(takeover).toMatchObject({ status: 'claimed' });
        expect((takeover as Extract<IdempotencyClaim, { status: 'claimed' }>).token).not.toBe(first);
      });

      it('ignores the old token after a takeover: its complete and release change nothing', async () => {
        const subject = await store();
        const old = await claimed(subject, 'key-a');
        clock.advance(LEASE_MS);
        const current = await claimed(subject, 'key-a');

        await subject.complete('key-a', old, FAILURE, RETENTION_MS);
        await subject.release('key-a', old);

        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });
        await subject.complete('key-a', current, SUCCESS, RETENTION_MS);
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toStrictEqual({
          status: 'completed',
          outcome: SUCCESS,
        });
      });

      it('gives the taken-over claim a lease of its own', async () => {
        const subject = await store();
        await claimed(subject, 'key-a');
        clock.advance(LEASE_MS);
        await claimed(subject, 'key-a');

        clock.advance(LEASE_MS - 1);
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });
        clock.advance(1);
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toMatchObject({ status: 'claimed' });
      });

      it('lets other arguments take over a claim whose lease passed', async () => {
        const subject = await store();
        await claimed(subject, 'key-a');

        clock.advance(LEASE_MS);

        await expect(subject.claim('key-a', OTHER_FP, LEASE_MS)).resolves.toMatchObject({ status: 'claimed' });
        await expect(subject.claim('key-a', FP, LEASE_MS)).resolves.toEqual({ status: 'conflict' });
      });
    });

    describe('bound', () => {
      itEvicting('evicts the oldest completed keys once more than maxEntries are completed', async () => {
        const maxEntries = 3;
        const subject = await store(maxEntries);
        const keys = ['key-1', 'key-2', 'key-3', 'key-4', 'key-5'];
        for (const key of keys) await completed(subject, key, succeeded(key));

        // The survivors first: claiming an evicted key claims it, and that claim takes a place.
        for (const key of ['key-3', 'key-4', 'key-5']) {
          await expect(subject.claim(key, FP, LEASE_MS)).resolves.toStrictEqual({
            status: 'completed',
            outcome: succeeded(key),
          });
        }
        await expect(subject.claim('key-1', FP, LEASE_MS)).resolves.toMatchObject({ status: 'claimed' });
      });

      itEvicting('evicts the second-oldest completed key too once two more than maxEntries are completed', async () => {
        const subject = await store(3);
        for (const key of ['key-1', 'key-2', 'key-3', 'key-4', 'key-5']) await completed(subject, key);

        await expect(subject.claim('key-2', OTHER_FP, LEASE_MS)).resolves.toMatchObject({ status: 'claimed' });
      });

      it('keeps exactly maxEntries completed keys when nothing is in flight', async () => {
        const subject = await store(3);
        for (const key of ['key-1', 'key-2', 'key-3']) await completed(subject, key);

        for (const key of ['key-1', 'key-2', 'key-3']) {
          await expect(subject.claim(key, FP, LEASE_MS)).resolves.toMatchObject({ status: 'completed' });
        }
      });

      itEvicting('evicts in completion order, not claim order', async () => {
        const subject = await store(2);
        const early = await claimed(subject, 'claimed-first');
        const late = await claimed(subject, 'claimed-second');
        await subject.complete('claimed-second', late, SUCCESS, RETENTION_MS);
        await subject.complete('claimed-first', early, SUCCESS, RETENTION_MS);

        await completed(subject, 'key-3');

        await expect(subject.claim('claimed-first', FP, LEASE_MS)).resolves.toMatchObject({ status: 'completed' });
        await expect(subject.claim('claimed-second', FP, LEASE_MS)).resolves.toMatchObject({ status: 'claimed' });
      });

      it('never evicts an in-flight key, however many keys complete after it', async () => {
        const maxEntries = 3;
        const subject = await store(maxEntries);
        const tokenA = await claimed(subject, 'running-a');
        const tokenB = await claimed(subject, 'running-b', OTHER_FP);
        for (let index = 0; index < 4 * maxEntries; index++) await completed(subject, `done-${index}`);

        await expect(subject.claim('running-a', FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });
        await expect(subject.claim('running-b', OTHER_FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });
        await expect(subject.claim('running-a', OTHER_FP, LEASE_MS)).resolves.toEqual({ status: 'conflict' });
        await expect(subject.claim(`done-${4 * maxEntries - 1}`, FP, LEASE_MS)).resolves.toMatchObject({
          status: 'completed',
        });

        // Their tokens still hold: each completes with its own outcome.
        await subject.complete('running-a', tokenA, SUCCESS, RETENTION_MS);
        await subject.complete('running-b', tokenB, FAILURE, RETENTION_MS);
        await expect(subject.claim('running-a', FP, LEASE_MS)).resolves.toStrictEqual({
          status: 'completed',
          outcome: SUCCESS,
        });
        await expect(subject.claim('running-b', OTHER_FP, LEASE_MS)).resolves.toStrictEqual({
          status: 'completed',
          outcome: FAILURE,
        });
      });

      it('keeps in-flight keys when there are more of them than maxEntries', async () => {
        const subject = await store(2);
        const running = ['running-1', 'running-2', 'running-3', 'running-4'];
        for (const key of running) await claimed(subject, key);
        await completed(subject, 'done-1');

        for (const key of running) {
          await expect(subject.claim(key, FP, LEASE_MS)).resolves.toEqual({ status: 'in_flight' });
        }
      });
    });

    describeIdempotencyStoreRenew({ store: () => store(), clock: () => clock });
  });
}
