import { type RateLimitContractContext, rpm, tpm } from './rate-limit-store-contract-context';

/**
 * The part of the `RateLimitStore` contract about the arguments it refuses, and an empty rule list.
 * Run by `describeRateLimitStore` inside its own describe, so against every store it runs against.
 */
export function describeRateLimitStoreArguments({ subject, take1 }: RateLimitContractContext): void {
  describe('arguments', () => {
    it('rejects a rule without an amount with a RangeError, changing nothing', async () => {
      await expect(subject().take('acme', [rpm(1), tpm(10)], [1])).rejects.toThrow(RangeError);
      await expect(subject().adjust('acme', [rpm(1)], [1, 2])).rejects.toThrow(RangeError);

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
      await expect(subject().take('acme', rules, amounts)).rejects.toThrow(RangeError);
    });

    it('answers an empty rule list allowed', async () => {
      await expect(subject().take('acme', [], [])).resolves.toEqual({ allowed: true, retryAfterMs: 0, buckets: [] });
    });

    it('answers an empty rule list allowed for a key with buckets, and leaves them as they were', async () => {
      await subject().take('acme', [rpm(10)], [4]);

      await expect(subject().take('acme', [], [])).resolves.toEqual({ allowed: true, retryAfterMs: 0, buckets: [] });
      await expect(subject().adjust('acme', [], [])).resolves.toBeUndefined();

      await expect(subject().take('acme', [rpm(10)], [0])).resolves.toMatchObject({ buckets: [{ remaining: 6 }] });
    });
  });
}
