import { type RateLimitContractContext, SECOND, MINUTE, rpm, tpm } from './rate-limit-store-contract-context';

/**
 * The part of the `RateLimitStore` contract about `take`: perMinute takes, continuous refill,
 * and the buckets each decision reports.
 * Run by `describeRateLimitStore` inside its own describe, so against every store it runs against.
 */
export function describeRateLimitStoreTake({ subject, clock, admitted, take1 }: RateLimitContractContext): void {
  describe('take', () => {
    it('allows perMinute takes on a fresh key, then refuses', async () => {
      await expect(admitted('acme', [rpm(5)], [1])).resolves.toBe(5);

      const refused = await take1('acme', rpm(5));
      expect(refused.allowed).toBe(false);
    });

    it('takes amounts, not calls', async () => {
      await expect(subject().take('acme', [tpm(1000)], [600])).resolves.toMatchObject({ allowed: true });
      await expect(subject().take('acme', [tpm(1000)], [400])).resolves.toMatchObject({ allowed: true });
      await expect(subject().take('acme', [tpm(1000)], [1])).resolves.toMatchObject({ allowed: false });
    });

    it('refills continuously: after 1 s, perMinute / 60 more are allowed', async () => {
      await admitted('acme', [rpm(600)], [1]);

      clock().advance(SECOND);
      await expect(admitted('acme', [rpm(600)], [1])).resolves.toBe(10);

      clock().advance(SECOND / 10);
      await expect(admitted('acme', [rpm(600)], [1])).resolves.toBe(1);
    });

    it('keeps fractional refill: two half-token refills make one token', async () => {
      await admitted('acme', [rpm(60)], [1]);

      clock().advance(SECOND / 2);
      await expect(take1('acme', rpm(60))).resolves.toMatchObject({ allowed: false });
      clock().advance(SECOND / 2);
      await expect(take1('acme', rpm(60))).resolves.toMatchObject({ allowed: true });
    });

    it('refills no further than perMinute, however long it waits', async () => {
      await admitted('acme', [rpm(5)], [1]);

      clock().advance(10 * MINUTE);
      await expect(admitted('acme', [rpm(5)], [1])).resolves.toBe(5);
    });

    it('refuses an amount above capacity, taking nothing, with 60 s × amount / perMinute', async () => {
      const refused = await subject().take('acme', [tpm(1000)], [1500]);

      expect(refused).toEqual({
        allowed: false,
        retryAfterMs: 90 * SECOND,
        buckets: [{ name: 'tpm', remaining: 1000, resetMs: 0 }],
      });
      await expect(subject().take('acme', [tpm(1000)], [1000])).resolves.toMatchObject({ allowed: true });
    });

    it('always allows an amount of 0, even in overage', async () => {
      await subject().adjust('acme', [tpm(100)], [-500]);

      await expect(subject().take('acme', [rpm(10), tpm(100)], [1, 0])).resolves.toMatchObject({
        allowed: true,
        retryAfterMs: 0,
      });
      await expect(subject().take('acme', [rpm(10), tpm(100)], [1, 1])).resolves.toMatchObject({ allowed: false });
    });

    it('answers allowed with retryAfterMs 0 and the buckets after the take, in rule order', async () => {
      const decision = await subject().take('acme', [tpm(1000), rpm(60)], [250, 1]);

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
      await subject().take('acme', [rpm(7)], [3]);
      clock().advance(SECOND);

      // 3 taken from 7, then 7/60 refilled: 4.1166… left, full after (3 − 7/60) × 60 000 / 7 ms.
      const decision = await subject().take('acme', [rpm(7)], [0]);
      expect(decision.buckets).toEqual([{ name: 'rpm', remaining: 4, resetMs: Math.ceil(173_000 / 7) }]);
    });

    it('answers a refused take with the buckets as they stand', async () => {
      await admitted('acme', [rpm(60)], [1]);
      clock().advance(SECOND / 4);

      await expect(take1('acme', rpm(60))).resolves.toEqual({
        allowed: false,
        retryAfterMs: 750,
        buckets: [{ name: 'rpm', remaining: 0, resetMs: MINUTE - 250 }],
      });
    });
  });
}
