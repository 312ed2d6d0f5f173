import fc from 'fast-check';
import { FakeClock } from '../common/fake-clock';
import { describeIdempotencyStore } from './idempotency-store.contract';
import type { StoredOutcome } from './idempotency.store';
import { DEFAULT_IDEMPOTENCY_BOUNDS } from './idempotency-bounds';
import { MemoryIdempotencyStore } from './memory-idempotency.store';

const LEASE_MS = 1_000;
const RETENTION_MS = 5_000;
const OUTCOME: StoredOutcome = { ok: true, result: { done: true }, attempts: 1, pool: 'normal' };

/** A memory store bounded by `maxEntries` alone. */
const byCount = (clock: FakeClock, maxEntries: number) =>
  new MemoryIdempotencyStore(clock, { ...DEFAULT_IDEMPOTENCY_BOUNDS, maxEntries });

describeIdempotencyStore('MemoryIdempotencyStore', (clock, bounds) => new MemoryIdempotencyStore(clock, bounds));

describe('MemoryIdempotencyStore', () => {
  async function complete(store: MemoryIdempotencyStore, key: string): Promise<void> {
    const claim = await store.claim(key, 'fp', LEASE_MS, 'tenant');
    if (claim.status !== 'claimed') throw new Error(`expected ${key} to be claimed, got ${claim.status}`);
    await store.complete(key, claim.token, OUTCOME, RETENTION_MS);
  }

  it('holds at most maxEntries keys while none is in flight', async () => {
    const store = byCount(new FakeClock(), 3);

    for (let index = 0; index < 10; index++) {
      await complete(store, `key-${index}`);
      expect(store.size).toBe(Math.min(index + 1, 3));
    }
  });

  it('keeps no completed key while in-flight keys alone exceed maxEntries', async () => {
    const store = byCount(new FakeClock(), 2);
    const tokens: string[] = [];
    for (const key of ['running-1', 'running-2', 'running-3']) {
      const claim = await store.claim(key, 'fp', LEASE_MS, 'tenant');
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
        const store = byCount(clock, maxEntries);
        // The live claim of each key: completing or releasing it ends it; a takeover replaces it.
        const live = new Map<string, string>();
        const spent: Array<[string, string]> = [];

        for (const next of steps) {
          if (next.kind === 'claim') {
            const claim = await store.claim(next.key, next.other ? 'fp-other' : 'fp', LEASE_MS, 'tenant');
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

  it('keeps its bytes within maxBytes in all and maxBytesPerTenant each, counting exactly what it holds', async () => {
    const tenants = ['t0', 't1', 't2'];
    const step = fc.record({
      key: fc.constantFrom('k0', 'k1', 'k2', 'k3', 'k4', 'k5'),
      tenant: fc.constantFrom(...tenants),
      size: fc.integer({ min: 0, max: 400 }),
      advanceMs: fc.constantFrom(0, 0, RETENTION_MS / 2),
    });

    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const clock = new FakeClock();
        const bounds = { maxEntries: 4, maxBytes: 600, maxBytesPerTenant: 400, maxEntryBytes: 300 };
        const store = new MemoryIdempotencyStore(clock, bounds);
        for (const { key, tenant, size, advanceMs } of steps) {
          clock.advance(advanceMs);
          // Keys are the tenant's own, as scoped keys are.
          const claim = await store.claim(`${tenant}:${key}`, 'fp', LEASE_MS, tenant);
          if (claim.status === 'claimed') {
            const outcome: StoredOutcome = { ok: true, result: 'x'.repeat(size), attempts: 1, pool: 'normal' };
            await store.complete(`${tenant}:${key}`, claim.token, outcome, RETENTION_MS);
          }

          const perTenant = tenants.map((name) => store.bytesOf(name));
          expect(store.bytes).toBeLessThanOrEqual(bounds.maxBytes);
          for (const bytes of perTenant) expect(bytes).toBeLessThanOrEqual(bounds.maxBytesPerTenant);
          expect(perTenant.reduce((sum, bytes) => sum + bytes, 0)).toBe(store.bytes);
        }
        // Once every outcome expired, nothing is counted.
        clock.advance(RETENTION_MS);
        await store.claim('sweep', 'fp', LEASE_MS, 't0');
        expect(store.bytes).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('counts an outcome by the UTF-8 bytes of its JSON', async () => {
    const store = new MemoryIdempotencyStore(new FakeClock(), DEFAULT_IDEMPOTENCY_BOUNDS);
    const outcome: StoredOutcome = { ok: true, result: '€ and ü', attempts: 1, pool: 'normal' };
    const claim = await store.claim('key', 'fp', LEASE_MS, 'tenant');
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.complete('key', claim.token, outcome, RETENTION_MS);

    expect(store.bytes).toBe(Buffer.byteLength(JSON.stringify(outcome)));
    expect(store.bytesOf('tenant')).toBe(store.bytes);
    expect(store.bytesOf('another')).toBe(0);
  });

  it.each(['maxBytes', 'maxBytesPerTenant', 'maxEntryBytes'])('throws a RangeError when %s is below 0', (bound) => {
    expect(() => new MemoryIdempotencyStore(new FakeClock(), { ...DEFAULT_IDEMPOTENCY_BOUNDS, [bound]: -1 })).toThrow(
      RangeError,
    );
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])(
    'throws a RangeError when maxEntries is %p',
    (maxEntries) => {
      expect(() => byCount(new FakeClock(), maxEntries)).toThrow(RangeError);
    },
  );

  it('holds no key for a renew that answers false', async () => {
    const clock = new FakeClock();
    const store = byCount(clock, 10);
    await complete(store, 'done');
    const claim = await store.claim('lapsed', 'fp', LEASE_MS, 'tenant');
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    clock.advance(LEASE_MS);

    await expect(store.renew('never-claimed', 'token', LEASE_MS)).resolves.toBe(false);
    await expect(store.renew('lapsed', claim.token, LEASE_MS)).resolves.toBe(false);

    expect(store.size).toBe(2);
  });

  it('accepts a maxEntries of 1 and keeps the latest completed key', async () => {
    const store = byCount(new FakeClock(), 1);
    await complete(store, 'first');
    await complete(store, 'second');

    expect(store.size).toBe(1);
    await expect(store.claim('second', 'fp', LEASE_MS, 'tenant')).resolves.toMatchObject({ status: 'completed' });
  });
});
