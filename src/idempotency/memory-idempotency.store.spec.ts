import fc from 'fast-check';
import { FakeClock } from '../common/fake-clock';
import { describeIdempotencyStore } from './idempotency-store.contract';
import type { StoredOutcome } from './idempotency.store';
import { MemoryIdempotencyStore } from './memory-idempotency.store';

const LEASE_MS = 1_000;
const RETENTION_MS = 5_000;
const OUTCOME: StoredOutcome = { ok: true, result: { done: true }, attempts: 1, pool: 'normal' };

describeIdempotencyStore(
  'MemoryIdempotencyStore',
  (clock, maxEntries) => new MemoryIdempotencyStore(clock, maxEntries),
);

describe('MemoryIdempotencyStore', () => {
  async function complete(store: MemoryIdempotencyStore, key: string): Promise<void> {
    const claim = await store.claim(key, 'fp', LEASE_MS);
    if (claim.status !== 'claimed') throw new Error(`expected ${key} to be claimed, got ${claim.status}`);
    await store.complete(key, claim.token, OUTCOME, RETENTION_MS);
  }

  it('holds at most maxEntries keys while none is in flight', async () => {
    const store = new MemoryIdempotencyStore(new FakeClock(), 3);

    for (let index = 0; index < 10; index++) {
      await complete(store, `key-${index}`);
      expect(store.size).toBe(Math.min(index + 1, 3));
    }
  });

  it('keeps no completed key while in-flight keys alone exceed maxEntries', async () => {
    const store = new MemoryIdempotencyStore(new FakeClock(), 2);
    const tokens: string[] = [];
    for (const key of ['running-1', 'running-2', 'running-3']) {
      const claim = await store.claim(key, 'fp', LEASE_MS);
      if (claim.status === 'claimed') tokens.push(claim.token);
    }
    expect(tokens).toHaveLength(3);

    await complete(store, 'done-1');
    await complete(store, 'done-2');
    expect(store.size).toBe(3);

    await store.release('running-1', tokens[0]);
    await store.release('running-2', tokens[1]);
    await complete(store, 'done-3');
    expect(store.size).toBe(2);
  });

  it('never holds more than maxEntries keys plus the ones in flight, whatever the sequence', async () => {
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7'];
    const step = fc.oneof(
      fc.record({ kind: fc.constant('claim' as const), key: fc.constantFrom(...keys), other: fc.boolean() }),
      fc.record({ kind: fc.constant('complete' as const), pick: fc.nat(), stale: fc.boolean() }),
      fc.record({ kind: fc.constant('release' as const), pick: fc.nat(), stale: fc.boolean() }),
      fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 2 * RETENTION_MS }) }),
    );

    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 5 }), fc.array(step, { maxLength: 60 }), async (maxEntries, steps) => {
        const clock = new FakeClock();
        const store = new MemoryIdempotencyStore(clock, maxEntries);
        // The live claim of each key: completing or releasing it ends it; a takeover replaces it.
        const live = new Map<string, string>();
        const spent: Array<[string, string]> = [];

        for (const next of steps) {
          if (next.kind === 'claim') {
            const claim = await store.claim(next.key, next.other ? 'fp-other' : 'fp', LEASE_MS);
            if (claim.status === 'claimed') {
              const previous = live.get(next.key);
              if (previous !== undefined) spent.push([next.key, previous]);
              live.set(next.key, claim.token);
            }
          } else if (next.kind === 'advance') {
            clock.advance(next.ms);
          } else if (next.stale && spent.length > 0) {
            const [key, token] = spent[next.pick % spent.length];
            if (next.kind === 'complete') await store.complete(key, token, OUTCOME, RETENTION_MS);
            else await store.release(key, token);
          } else if (live.size > 0) {
            const [key, token] = [...live][next.pick % live.size];
            live.delete(key);
            spent.push([key, token]);
            if (next.kind === 'complete') await store.complete(key, token, OUTCOME, RETENTION_MS);
            else await store.release(key, token);
          }

          expect(store.size).toBeLessThanOrEqual(maxEntries + live.size);
          expect(store.size).toBeLessThanOrEqual(Math.max(maxEntries, live.size));
          expect(store.size).toBeGreaterThanOrEqual(live.size);
        }
      }),
      { numRuns: 300 },
    );
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])(
    'throws a RangeError when maxEntries is %p',
    (maxEntries) => {
      expect(() => new MemoryIdempotencyStore(new FakeClock(), maxEntries)).toThrow(RangeError);
    },
  );

  it('holds no key for a renew that answers false', async () => {
    const clock = new FakeClock();
    const store = new MemoryIdempotencyStore(clock, 10);
    await complete(store, 'done');
    const claim = await store.claim('lapsed', 'fp', LEASE_MS);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    clock.advance(LEASE_MS);

    await expect(store.renew('never-claimed', 'token', LEASE_MS)).resolves.toBe(false);
    await expect(store.renew('lapsed', claim.token, LEASE_MS)).resolves.toBe(false);

    expect(store.size).toBe(2);
  });

  it('accepts a maxEntries of 1 and keeps the latest completed key', async () => {
    const store = new MemoryIdempotencyStore(new FakeClock(), 1);
    await complete(store, 'first');
    await complete(store, 'second');

    expect(store.size).toBe(1);
    await expect(store.claim('second', 'fp', LEASE_MS)).resolves.toMatchObject({ status: 'completed' });
  });
});
