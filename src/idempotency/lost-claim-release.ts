import type { Clock } from '../common';
import type { IdempotencyStore } from './idempotency.store';

/** The first wait before a release is tried again, in milliseconds; each wait after doubles. */
const FIRST_RETRY_MS = 100;
/** The longest wait between two tries, in milliseconds. */
const MAX_RETRY_MS = 2_000;

/**
 * Gives back, in the background, a claim whose reply this process never got (the command timed
 * out or its connection closed): the store may have run it all the same, and then the key would
 * stay `in_flight` for a whole lease with nobody running it. The release carries the claim's own
 * token, so it never frees a claim someone else holds (a later claim of the key, even this
 * client's retry, has a token of its own). Tried at once, then again with a doubling wait while
 * the store does not answer, and given up once `leaseMs` passed: by then the claim lapsed by
 * itself. Resolves when done, whatever happened; never rejects.
 */
export async function releaseLostClaim(
  store: IdempotencyStore,
  clock: Clock,
  claim: { key: string; token: string; leaseMs: number },
): Promise<void> {
  const giveUpAt = clock.now() + claim.leaseMs;
  for (let waitMs = FIRST_RETRY_MS; ; waitMs = Math.min(2 * waitMs, MAX_RETRY_MS)) {
    try {
      await store.release(claim.key, claim.token);
      return;
    } catch {
      // The store does not answer yet: the next turn may find it back.
    }
    if (clock.now() + waitMs >= giveUpAt) return;
    await new Promise<void>((resolve) => clock.setTimer(resolve, waitMs, { unref: true }));
  }
}
