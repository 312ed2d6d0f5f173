import { type RateLimitContractContext, rpm, tpm } from './rate-limit-store-contract-context';
import type { RateLimitDecision } from './rate-limit.store';

/**
 * The part of the `RateLimitStore` contract about concurrent takes and adjusts, each counted once.
 * Run by `describeRateLimitStore` inside its own describe, so against every store it runs against.
 */
export function describeRateLimitStoreConcurrency({ subject }: RateLimitContractContext): void {
  describe('concurrency', () => {
    it('admits exactly 10 of 100 concurrent takes against a limit of 10', async () => {
      const decisions = await Promise.all(
        Array.from({ length: 100 }, () => subject().take('acme', [rpm(10), tpm(100_000)], [1, 50])),
      );

      expect(decisions.filter((decision: RateLimitDecision) => decision.allowed)).toHaveLength(10);
      const last = await subject().take('acme', [rpm(10), tpm(100_000)], [0, 0]);
      expect(last.buckets.map((bucket) => bucket.remaining)).toEqual([0, 100_000 - 500]);
    });

    it('lets concurrent adjusts all count', async () => {
      await subject().take('acme', [tpm(1000)], [1000]);

      await Promise.all(Array.from({ length: 50 }, () => subject().adjust('acme', [tpm(1000)], [10])));

      const decision = await subject().take('acme', [tpm(1000)], [0]);
      expect(decision.buckets[0].remaining).toBe(500);
    });
  });
}
