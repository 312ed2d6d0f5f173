import { promised, type Promised } from '../../test/support/promised';
import { FakeClock } from '../common/fake-clock';
import type { BucketRule, RateLimitDecision, RateLimitStore } from './rate-limit.store';

/** Builds the store under test on the given clock (its only source of time). */
export type MakeRateLimitStore = (clock: FakeClock) => RateLimitStore | Promise<RateLimitStore>;

const SECOND = 1_000;
const MINUTE = 60_000;

const rpm = (perMinute: number): BucketRule => ({ name: 'rpm', perMinute });
const tpm = (perMinute: number): BucketRule => ({ name: 'tpm', perMinute });

/**
 * The contract every {@link RateLimitStore} keeps, asserted only through the interface and with
 * time moved only through the {@link FakeClock} handed to `makeStore`, so the same suite runs
 * against the memory store and against Redis. `cleanup` runs after each test.
 */
export function describeRateLimitStore(
  name: string,
  makeStore: MakeRateLimitStore,
  cleanup?: () => Promise<void>,
): void {
  describe(`RateLimitStore contract: ${name}`, () => {
    let clock: FakeClock;
    let subject: Promised<RateLimitStore>;

    beforeEach(async () => {
      clock = new FakeClock();
      subject = promised(await makeStore(clock));
    });

    if (cleanup) afterEach(cleanup);

    /** Takes one at a time until refused; answers how many were admitted. */
    async function admitted(key: string, rules: readonly BucketRule[], amounts: readonly number[], most = 10_000) {
      for (let count = 0; count < most; count++) {
        if (!(await subject.take(key, rules, amounts)).allowed) return count;
      }
      return most;
    }

    const take1 = (key: string, rule: BucketRule) => subject.take(key, [rule], [1]);

    describe('take', () => {
      it('allows perMinute takes on a fresh key, then refuses', async () => {
        await expect(admitted('acme', [rpm(5)], [1])).resolves.toBe(5);

        const refused = await take1('acme', rpm(5));
        expect(refused.allowed).toBe(false);
      });

      it('takes amounts, not calls', async () => {
        await expect(subject.take('acme', [tpm(1000)], [600])).resolves.toMatchObject({ allowed: true });
        await expect(subject.take('acme', [tpm(1000)], [400])).resolves.toMatchObject({ allowed: true });
        await expect(subject.take('acme', [tpm(1000)], [1])).resolves.toMatchObject({ allowed: false });
      });

      it('refills continuously: after 1 s, perMinute / 60 more are allowed', async () => {
        await admitted('acme', [rpm(600)], [1]);

        clock.advance(SECOND);
        await expect(admitted('acme', [rpm(600)], [1])).resolves.toBe(10);

        clock.advance(SECOND / 10);
        await expect(admitted('acme', [rpm(600)], [1])).resolves.toBe(1);
      });

      it('keeps fractional refill: two half-token refills make one token', async () => {
        await admitted('acme', [rpm(60)], [1]);

        clock.advance(SECOND / 2);
        await expect(take1('acme', rpm(60))).resolves.toMatchObject({ allowed: false });
        clock.advance(SECOND / 2);
        await expect(take1('acme', rpm(60))).resolves.toMatchObject({ allowed: true });
      });

      it('refills no further than perMinute, however long it waits', async () => {
        await admitted('acme', [rpm(5)], [1]);

        clock.advance(10 * MINUTE);
        await expect(admitted('acme', [rpm(5)], [1])).resolves.toBe(5);
      });

      it('refuses an amount above capacity, taking nothing, with 60 s × amount / perMinute', async () => {
        const refused = await subject.take('acme', [tpm(1000)], [1500]);

        expect(refused).toEqual({
          allowed: false,
          retryAfterMs: 90 * SECOND,
          buckets: [{ name: 'tpm', remaining: 1000, resetMs: 0 }],
        });
        await expect(subject.take('acme', [tpm(1000)], [1000])).resolves.toMatchObject({ allowed: true });
      });

      it('always allows an amount of 0, even in overage', async () => {
        await subject.adjust('acme', [tpm(100)], [-500]);

        await expect(subject.take('acme', [rpm(10), tpm(100)], [1, 0])).resolves.toMatchObject({
          allowed: true,
          retryAfterMs: 0,
        });
        await expect(subject.take('acme', [rpm(10), tpm(100)], [1, 1])).resolves.toMatchObject({ allowed: false });
      });

      it('answers allowed with retryAfterMs 0 and the buckets after the take, in rule order', async () => {
        const decision = await subject.take('acme', [tpm(1000), rpm(60)], [250, 1]);

        expect(decision).toEqual({
          allowed: true,
          retryAfterMs: 0,
          buckets: [
            { name: 'tpm', remaining: 750, resetMs: 15 * SECOND },
            { name: 'rpm', remaining: 59, resetMs: SECOND },
          ],
        });
      });

      it('reports whole tokens left and the ms until full, rounded up', async () => {
        await subject.take('acme', [rpm(7)], [3]);
        clock.advance(SECOND);

        // 3 taken from 7, then 7/60 refilled: 4.1166… left, full after (3 − 7/60) × 60 000 / 7 ms.
        const decision = await subject.take('acme', [rpm(7)], [0]);
        expect(decision.buckets).toEqual([{ name: 'rpm', remaining: 4, resetMs: Math.ceil(173_000 / 7) }]);
      });

      it('answers a refused take with the buckets as they stand', async () => {
        await admitted('acme', [rpm(60)], [1]);
        clock.advance(SECOND / 4);

        await expect(take1('acme', rpm(60))).resolves.toEqual({
          allowed: false,
          retryAfterMs: 750,
          buckets: [{ name: 'rpm', remaining: 0, resetMs: MINUTE - 250 }],
        });
      });
    });

    describe('all or none', () => {
      it('takes nothing from any bucket when one refuses', async () => {
        await subject.take('acme', [tpm(1000)], [900]);

        const refused = await subject.take('acme', [rpm(10), tpm(1000)], [1, 200]);
        expect(refused.allowed).toBe(false);
        expect(refused.buckets).toEqual([
          { name: 'rpm', remaining: 10, resetMs: 0 },
          { name: 'tpm', remaining: 100, resetMs: 54 * SECOND },
        ]);

        await expect(admitted('acme', [rpm(10)], [1])).resolves.toBe(10);
        await expect(subject.take('acme', [tpm(1000)], [100])).resolves.toMatchObject({ allowed: true });
      });

      it('leaves both buckets unchanged when rpm refuses and tpm would fit', async () => {
        await admitted('acme', [rpm(2)], [1]);

        await expect(subject.take('acme', [rpm(2), tpm(1000)], [1, 500])).resolves.toMatchObject({ allowed: false });

        await expect(subject.take('acme', [tpm(1000)], [1000])).resolves.toMatchObject({ allowed: true });
      });

      it('takes from every bucket when all fit', async () => {
        await subject.take('acme', [rpm(10), tpm(1000)], [1, 400]);

        const decision = await subject.take('acme', [rpm(10), tpm(1000)], [0, 0]);
        expect(decision.buckets.map((bucket) => bucket.remaining)).toEqual([9, 600]);
      });

      it('identifies buckets by name, not by position', async () => {
        await subject.take('acme', [rpm(10)], [4]);

        const decision = await subject.take('acme', [tpm(1000), rpm(10)], [0, 0]);
        expect(decision.buckets).toEqual([
          { name: 'tpm', remaining: 1000, resetMs: 0 },
          expect.objectContaining({ name: 'rpm', remaining: 6 }),
        ]);
      });
    });

    describe('retryAfterMs', () => {
      it('is exact: one ms early is refused, on time is allowed', async () => {
        await admitted('acme', [rpm(7)], [1]);
        const refused = await take1('acme', rpm(7));
        expect(refused.retryAfterMs).toBe(Math.ceil(MINUTE / 7));

        clock.advance(refused.retryAfterMs - 1);
        await expect(take1('acme', rpm(7))).resolves.toMatchObject({ allowed: false, retryAfterMs: 1 });
        clock.advance(1);
        await expect(take1('acme', rpm(7))).resolves.toMatchObject({ allowed: true });
      });

      it('is the longest wait of the refusing buckets', async () => {
        await subject.take('acme', [rpm(60), tpm(600)], [60, 600]);

        const refused = await subject.take('acme', [rpm(60), tpm(600)], [1, 300]);
        expect(refused.retryAfterMs).toBe(30 * SECOND);

        clock.advance(30 * SECOND - 1);
        await expect(subject.take('acme', [rpm(60), tpm(600)], [1, 300])).resolves.toMatchObject({ allowed: false });
        clock.advance(1);
        await expect(subject.take('acme', [rpm(60), tpm(600)], [1, 300])).resolves.toMatchObject({ allowed: true });
      });

      it('counts fractional refill already earned', async () => {
        await subject.take('acme', [tpm(600)], [600]);
        clock.advance(2_500);

        await expect(subject.take('acme', [tpm(600)], [30])).resolves.toMatchObject({
          allowed: false,
          retryAfterMs: 500,
        });
      });
    });

    describe('adjust', () => {
      it('refunds what a settle did not use: reserve 1000, actual 300 → 700 back', async () => {
        await subject.take('acme', [tpm(1000)], [1000]);

        await subject.adjust('acme', [tpm(1000)], [700]);

        await expect(subject.take('acme', [tpm(1000)], [700])).resolves.toMatchObject({
          allowed: true,
          buckets: [{ name: 'tpm', remaining: 0, resetMs: MINUTE }],
        });
        await expect(subject.take('acme', [tpm(1000)], [1])).resolves.toMatchObject({ allowed: false });
      });

      it('charges an overage below zero, and the next take waits for it', async () => {
        await subject.take('acme', [tpm(1000)], [1000]);

        await subject.adjust('acme', [tpm(1000)], [-500]);

        const refused = await subject.take('acme', [tpm(1000)], [1]);
        expect(refused).toEqual({
          allowed: false,
          retryAfterMs: 30_060,
          buckets: [{ name: 'tpm', remaining: 0, resetMs: 90 * SECOND }],
        });
        clock.advance(30_059);
        await expect(subject.take('acme', [tpm(1000)], [1])).resolves.toMatchObject({ allowed: false });
        clock.advance(1);
        await expect(subject.take('acme', [tpm(1000)], [1])).resolves.toMatchObject({ allowed: true });
      });

      it('charges a fresh key from full', async () => {
        await subject.adjust('acme', [tpm(1000)], [-1200]);

        await expect(subject.take('acme', [tpm(1000)], [1])).resolves.toMatchObject({
          allowed: false,
          retryAfterMs: 12_060,
        });
      });

      it('never fills a bucket above capacity', async () => {
        await subject.adjust('acme', [rpm(5)], [100]);
        await expect(admitted('acme', [rpm(5)], [1])).resolves.toBe(5);

        await subject.adjust('acme', [rpm(5)], [3]);
        await subject.adjust('acme', [rpm(5)], [3]);
        await expect(admitted('acme', [rpm(5)], [1])).resolves.toBe(5);
      });

      it('adjusts each bucket by its own amount', async () => {
        await subject.take('acme', [rpm(10), tpm(1000)], [5, 800]);

        await subject.adjust('acme', [rpm(10), tpm(1000)], [2, -100]);

        const decision = await subject.take('acme', [rpm(10), tpm(1000)], [0, 0]);
        expect(decision.buckets.map((bucket) => bucket.remaining)).toEqual([7, 100]);
      });

      it('counts the refill earned before the adjust', async () => {
        await subject.take('acme', [tpm(600)], [600]);
        clock.advance(10 * SECOND);

        await subject.adjust('acme', [tpm(600)], [-50]);

        const decision = await subject.take('acme', [tpm(600)], [0]);
        expect(decision.buckets).toEqual([{ name: 'tpm', remaining: 50, resetMs: 55 * SECOND }]);
      });
    });

    describe('isolation', () => {
      it('keeps keys independent', async () => {
        await admitted('acme', [rpm(3)], [1]);

        await expect(admitted('globex', [rpm(3)], [1])).resolves.toBe(3);
        await expect(take1('acme', rpm(3))).resolves.toMatchObject({ allowed: false });
      });

      it('keeps buckets of different names in one key independent', async () => {
        await subject.take('acme', [{ name: 'a', perMinute: 10 }], [10]);

        await expect(subject.take('acme', [{ name: 'b', perMinute: 10 }], [10])).resolves.toMatchObject({
          allowed: true,
        });
        await expect(subject.take('acme', [{ name: 'a', perMinute: 10 }], [1])).resolves.toMatchObject({
          allowed: false,
        });
      });

      it('keeps an adjust of one key from touching another', async () => {
        await subject.adjust('acme', [tpm(100)], [-1000]);

        await expect(subject.take('globex', [tpm(100)], [100])).resolves.toMatchObject({ allowed: true });
      });
    });

    describe('concurrency', () => {
      it('admits exactly 10 of 100 concurrent takes against a limit of 10', async () => {
        const decisions = await Promise.all(
          Array.from({ length: 100 }, () => subject.take('acme', [rpm(10), tpm(100_000)], [1, 50])),
        );

        expect(decisions.filter((decision: RateLimitDecision) => decision.allowed)).toHaveLength(10);
        const last = await subject.take('acme', [rpm(10), tpm(100_000)], [0, 0]);
        expect(last.buckets.map((bucket) => bucket.remaining)).toEqual([0, 100_000 - 500]);
      });

      it('lets concurrent adjusts all count', async () => {
        await subject.take('acme', [tpm(1000)], [1000]);

        await Promise.all(Array.from({ length: 50 }, () => subject.adjust('acme', [tpm(1000)], [10])));

        const decision = await subject.take('acme', [tpm(1000)], [0]);
        expect(decision.buckets[0].remaining).toBe(500);
      });
    });

    describe('arguments', () => {
      it('rejects a rule without an amount with a RangeError, changing nothing', async () => {
        await expect(subject.take('acme', [rpm(1), tpm(10)], [1])).rejects.toThrow(RangeError);
        await expect(subject.adjust('acme', [rpm(1)], [1, 2])).rejects.toThrow(RangeError);

        await expect(take1('acme', rpm(1))).resolves.toMatchObject({ allowed: true });
      });

      it.each([
        ['a negative take', [rpm(10)], [-1]],
        ['a non-finite amount', [rpm(10)], [Number.NaN]],
        ['perMinute 0', [rpm(0)], [1]],
        ['an infinite perMinute', [rpm(Number.POSITIVE_INFINITY)], [1]],
        ['one bucket twice', [rpm(10), rpm(10)], [1, 1]],
        ['an empty bucket name', [{ name: '', perMinute: 10 }], [1]],
      ])('rejects %s with a RangeError', async (_label, rules, amounts) => {
        await expect(subject.take('acme', rules, amounts)).rejects.toThrow(RangeError);
      });

      it('answers an empty rule list allowed', async () => {
        await expect(subject.take('acme', [], [])).resolves.toEqual({ allowed: true, retryAfterMs: 0, buckets: [] });
      });

      it('answers an empty rule list allowed for a key with buckets, and leaves them as they were', async () => {
        await subject.take('acme', [rpm(10)], [4]);

        await expect(subject.take('acme', [], [])).resolves.toEqual({ allowed: true, retryAfterMs: 0, buckets: [] });
        await expect(subject.adjust('acme', [], [])).resolves.toBeUndefined();

        await expect(subject.take('acme', [rpm(10)], [0])).resolves.toMatchObject({ buckets: [{ remaining: 6 }] });
      });
    });
  });
}
