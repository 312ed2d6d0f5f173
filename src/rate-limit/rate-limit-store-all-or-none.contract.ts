import { type RateLimitContractContext, SECOND, rpm, tpm } from './rate-limit-store-contract-context';

/**
 * The part of the `RateLimitStore` contract about a take of several buckets: from all of them
 * or from none.
 * Run by `describeRateLimitStore` inside its own describe, so against every store it runs against.
 */
export function describeRateLimitStoreAllOrNone({ subject, admitted }: RateLimitContractContext): void {
  describe('all or none', () => {
    it('takes nothing from any bucket when one refuses', async () => {
      await subject().take('acme', [tpm(1000)], [900]);

      const refused = await subject().take('acme', [rpm(10), tpm(1000)], [1, 200]);
      expect(refused.allowed).toBe(false);
      expect(refused.buckets).toEqual([
        { name: 'rpm', remaining: 10, resetMs: 0 },
        { name: 'tpm', remaining: 100, resetMs: 54 * SECOND },
      ]);

      await expect(admitted('acme', [rpm(10)], [1])).resolves.toBe(10);
      await expect(subject().take('acme', [tpm(1000)], [100])).resolves.toMatchObject({ allowed: true });
    });

    it('leaves both buckets unchanged when rpm refuses and tpm would fit', async () => {
      await admitted('acme', [rpm(2)], [1]);

      await expect(subject().take('acme', [rpm(2), tpm(1000)], [1, 500])).resolves.toMatchObject({ allowed: false });

      await expect(subject().take('acme', [tpm(1000)], [1000])).resolves.toMatchObject({ allowed: true });
    });

    it('takes from every bucket when all fit', async () => {
      await subject().take('acme', [rpm(10), tpm(1000)], [1, 400]);

      const decision = await subject().take('acme', [rpm(10), tpm(1000)], [0, 0]);
      expect(decision.buckets.map((bucket) => bucket.remaining)).toEqual([9, 600]);
    });

    it('identifies buckets by name, not by position', async () => {
      await subject().take('acme', [rpm(10)], [4]);

      const decision = await subject().take('acme', [tpm(1000), rpm(10)], [0, 0]);
      expect(decision.buckets).toEqual([
        { name: 'tpm', remaining: 1000, resetMs: 0 },
        expect.objectContaining({ name: 'rpm', remaining: 6 }),
      ]);
    });
  });
}
