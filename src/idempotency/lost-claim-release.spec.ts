import { LazyAbortController } from '../common';
import { FakeClock } from '../common/fake-clock';
import { IdempotencyService } from './idempotency.service';
import type { IdempotencyStore } from './idempotency.store';
import { DEFAULT_IDEMPOTENCY_BOUNDS } from './idempotency-bounds';
import { releaseLostClaim } from './lost-claim-release';
import { MemoryIdempotencyStore } from './memory-idempotency.store';

const LEASE_MS = 10_000;
const KEY = 'scoped-key-lost';
const ARGS = { order: 1 };

/**
 * A store in front of a memory store, whose link can lose the next claim's reply (the claim
 * runs, its caller gets an error) and refuse everything while `down`.
 */
function flakyLink() {
  const clock = new FakeClock();
  const memory = new MemoryIdempotencyStore(clock, { ...DEFAULT_IDEMPOTENCY_BOUNDS, maxEntries: 100 });
  const link = { down: false, loseNextClaimReply: false, releases: 0 };
  const refuseWhileDown = () => (link.down ? Promise.reject(new Error('connection closed')) : undefined);
  const store: IdempotencyStore = {
    claim: async (...args) => {
      await refuseWhileDown();
      const answer = await memory.claim(...args);
      if (!link.loseNextClaimReply) return answer;
      link.loseNextClaimReply = false;
      link.down = true;
      throw new Error('connection closed before the reply');
    },
    complete: async (...args) => (await refuseWhileDown(), memory.complete(...args)),
    release: async (...args) => {
      link.releases++;
      await refuseWhileDown();
      return memory.release(...args);
    },
    renew: async (...args) => (await refuseWhileDown(), memory.renew(...args)),
  };
  const service = () => new IdempotencyService(store, { idempotency: { retentionMs: 60_000 } }, clock);
  const begin = (replica: IdempotencyService) =>
    replica.begin(KEY, 'tenant', ARGS, LEASE_MS, new LazyAbortController());
  return { clock, memory, link, service, begin };
}

describe('a claim whose reply was lost (issue 36)', () => {
  it('is released once the store answers again, so a retry of the key leads without waiting a lease', async () => {
    const { clock, link, service, begin } = flakyLink();
    const replica = service();
    link.loseNextClaimReply = true;

    await expect(begin(replica)).rejects.toMatchObject({ kind: 'unavailable' });
    // The store ran the claim; while it does not answer, the release is tried again and again.
    await clock.advanceAsync(300);
    link.down = false;
    await clock.advanceAsync(400);

    await expect(begin(replica)).resolves.toMatchObject({ kind: 'lead' });
    expect(clock.now()).toBeLessThan(LEASE_MS);
  });

  it('never releases a claim someone else took: the release carries the lost claim’s token', async () => {
    const { clock, memory, link, service, begin } = flakyLink();
    link.loseNextClaimReply = true;
    await expect(begin(service())).rejects.toMatchObject({ kind: 'unavailable' });
    // The lost claim lapses and another takes the key before the store answers this replica again.
    clock.advance(LEASE_MS);
    link.down = false;
    await expect(memory.claim(KEY, 'fp-of-the-other', LEASE_MS, 'tenant', 'the-others')).resolves.toMatchObject({
      status: 'claimed',
    });
    await clock.advanceAsync(2_000);

    await expect(memory.renew(KEY, 'the-others', LEASE_MS)).resolves.toBe(true);
  });

  it('gives up trying once the lost claim’s lease has passed: it lapsed by itself', async () => {
    const { clock, link, memory } = flakyLink();
    link.down = true;
    const done = releaseLostClaim(
      {
        claim: () => Promise.reject(new Error('unused')),
        complete: () => Promise.reject(new Error('unused')),
        release: () => (link.releases++, Promise.reject(new Error('connection closed'))),
        renew: () => Promise.reject(new Error('unused')),
      },
      clock,
      { key: KEY, token: 'lost', leaseMs: LEASE_MS },
    );
    await clock.advanceAsync(LEASE_MS);

    await expect(done).resolves.toBeUndefined();
    expect(clock.pendingTimers).toBe(0);
    // 0, 100, 300, 700, 1500, 3100, 5100, 7100, 9100 ms: doubling waits up to 2 s, within the lease.
    expect(link.releases).toBe(9);
    expect(memory.size).toBe(0);
  });
});
