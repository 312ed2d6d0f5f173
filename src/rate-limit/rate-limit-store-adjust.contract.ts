import { type RateLimitContractContext, SECOND, MINUTE, rpm, tpm } from './rate-limit-store-contract-context';

/**
 * The part of the `RateLimitStore` contract about `adjust`: refunds up to capacity, and
 * overage charged below zero.
 * Run by `describeRateLimitStore` inside its own describe, so against every store it runs against.
 */
export function describeRateLimitStoreAdjust({ subject, clock, admitted }: RateLimitContractContext): void {
  describe('adjust', () => {
    it('refunds what a settle did not use: reserve 1000, actual 300 → 700 back', async () => {
      await subject().take('acme', [tpm(1000)], [1000]);

      await subject().adjust('acme', [tpm(1000)], [700]);

      await expect(subject().take('acme', [tpm(1000)], [700])).resolves.toMatchObject({
        allowed: true,
        buckets: [{ name: 'tpm', remaining: 0, resetMs: MINUTE }],
      });
      await expect(subject().take('acme', [tpm(1000)], [1])).resolves.toMatchObject({ allowed: false });
    });

    it('charges an overage below zero, and the next take waits for it', async () => {
      await subject().take('acme', [tpm(1000)], [1000]);

      await subject().adjust('acme', [tpm(1000)], [-500]);

      const refused = await subject().take('acme', [tpm(1000)], [1]);
      expect(refused).toEqual({
        allowed: false,
        retryAfterMs: 30_060,
        buckets: [{ name: 'tpm', remaining: 0, resetMs: 90 * SECOND }],
      });
      clock().advance(30_059);
      await expect(subject().take('acme', [tpm(1000)], [1])).resolves.toMatchObject({ allowed: false });
      clock().advance(1);
      await expect(subject().take('acme', [tpm(1000)], [1])).resolves.toMatchObject({ allowed: true });
    });

    it('charges a fresh key from full', async () => {
      await subject().adjust('acme', [tpm(1000)], [-1200]);

      await expect(subject().take('acme', [tpm(1000)], [1])).resolves.toMatchObject({
        allowed: false,
        retryAfterMs: 12_060,
      });
    });

    it('never fills a bucket above capacity', async () => {
      await subject().adjust('acme', [rpm(5)], [100]);
      await expect(admitted('acme', [rpm(5)], [1])).resolves.toBe(5);

      await subject().adjust('acme', [rpm(5)], [3]);
      await subject().adjust('acme', [rpm(5)], [3]);
      await expect(admitted('acme', [rpm(5)], [1])).resolves.toBe(5);
    });

    it('adjusts each bucket by its own amount', async () => {
      await subject().take('acme', [rpm(10), tpm(1000)], [5, 800]);

      await subject().adjust('acme', [rpm(10), tpm(1000)], [2, -100]);

      const decision = await subject().take('acme', [rpm(10), tpm(1000)], [0, 0]);
      expect(decision.buckets.map((bucket) => bucket.remaining)).toEqual([7, 100]);
    });

    it('counts the refill earned before the adjust', async () => {
      await subject().take('acme', [tpm(600)], [600]);
      clock().advance(10 * SECOND);

      await subject().adjust('acme', [tpm(600)], [-50]);

      const decision = await subject().take('acme', [tpm(600)], [0]);
      expect(decision.buckets).toEqual([{ name: 'tpm', remaining: 50, resetMs: 55 * SECOND }]);
    });
  });
}
