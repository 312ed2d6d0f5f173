import { type RateLimitContractContext, SECOND, MINUTE, rpm, tpm } from './rate-limit-store-contract-context';

/**
 * The part of the `RateLimitStore` contract about `retryAfterMs`: exactly when a refused take
 * would be allowed.
 * Run by `describeRateLimitStore` inside its own describe, so against every store it runs against.
 */
export function describeRateLimitStoreRetryAfter({ subject, clock, admitted, take1 }: RateLimitContractContext): void {
  describe('retryAfterMs', () => {
    it('is exact: one ms early is refused, on time is allowed', async () => {
      await admitted('acme', [rpm(7)], [1]);
      const refused = await take1('acme', rpm(7));
      expect(refused.retryAfterMs).toBe(Math.ceil(MINUTE / 7));

      clock().advance(refused.retryAfterMs - 1);
      await expect(take1('acme', rpm(7))).resolves.toMatchObject({ allowed: false, retryAfterMs: 1 });
      clock().advance(1);
      await expect(take1('acme', rpm(7))).resolves.toMatchObject({ allowed: true });
    });

    it('is the longest wait of the refusing buckets', async () => {
      await subject().take('acme', [rpm(60), tpm(600)], [60, 600]);

      const refused = await subject().take('acme', [rpm(60), tpm(600)], [1, 300]);
      expect(refused.retryAfterMs).toBe(30 * SECOND);

      clock().advance(30 * SECOND - 1);
      await expect(subject().take('acme', [rpm(60), tpm(600)], [1, 300])).resolves.toMatchObject({ allowed: false });
      clock().advance(1);
      await expect(subject().take('acme', [rpm(60), tpm(600)], [1, 300])).resolves.toMatchObject({ allowed: true });
    });

    it('counts fractional refill already earned', async () => {
      await subject().take('acme', [tpm(600)], [600]);
      clock().advance(2_500);

      await expect(subject().take('acme', [tpm(600)], [30])).resolves.toMatchObject({
        allowed: false,
        retryAfterMs: 500,
      });
    });
  });
}
