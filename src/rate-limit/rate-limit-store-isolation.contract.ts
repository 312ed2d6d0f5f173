import { type RateLimitContractContext, rpm, tpm } from './rate-limit-store-contract-context';

/**
 * The part of the `RateLimitStore` contract about keeping keys, and buckets in one key, apart.
 * Run by `describeRateLimitStore` inside its own describe, so against every store it runs against.
 */
export function describeRateLimitStoreIsolation({ subject, admitted, take1 }: RateLimitContractContext): void {
  describe('isolation', () => {
    it('keeps keys independent', async () => {
      await admitted('acme', [rpm(3)], [1]);

      await expect(admitted('globex', [rpm(3)], [1])).resolves.toBe(3);
      await expect(take1('acme', rpm(3))).resolves.toMatchObject({ allowed: false });
    });

    it('keeps buckets of different names in one key independent', async () => {
      await subject().take('acme', [{ name: 'a', perMinute: 10 }], [10]);

      await expect(subject().take('acme', [{ name: 'b', perMinute: 10 }], [10])).resolves.toMatchObject({
        allowed: true,
      });
      await expect(subject().take('acme', [{ name: 'a', perMinute: 10 }], [1])).resolves.toMatchObject({
        allowed: false,
      });
    });

    it('keeps an adjust of one key from touching another', async () => {
      await subject().adjust('acme', [tpm(100)], [-1000]);

      await expect(subject().take('globex', [tpm(100)], [100])).resolves.toMatchObject({ allowed: true });
    });
  });
}
