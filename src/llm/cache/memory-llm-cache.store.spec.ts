import { FakeClock } from '../../common/fake-clock';
import { cleanAnswer, describeLlmCacheStore } from './llm-cache-store.contract';
import { MemoryLlmCacheStore } from './memory-llm-cache.store';

const ROOMY = { maxEntries: 1_000, maxBytes: 1024 * 1024 };
const TTL_MS = 60_000;

describeLlmCacheStore('MemoryLlmCacheStore', (clock) => new MemoryLlmCacheStore(clock, ROOMY), {
  passTime: (clock, ms) => clock.advance(ms),
});

/** The bytes an answer holds in the store: its JSON in UTF-8. */
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('MemoryLlmCacheStore', () => {
  let clock: FakeClock;

  beforeEach(() => {
    clock = new FakeClock();
  });

  const storeOf = (bounds: Partial<typeof ROOMY> = {}) => new MemoryLlmCacheStore(clock, { ...ROOMY, ...bounds });

  it('answers at once, without a promise', () => {
    const store = storeOf();

    expect(store.set('k', cleanAnswer('Paris'), TTL_MS)).toBeUndefined();
    expect(store.get('k')).toEqual(cleanAnswer('Paris'));
  });

  it('hits until the last millisecond of the TTL and misses from its end on', () => {
    const store = storeOf();
    store.set('k', cleanAnswer('Paris'), TTL_MS);

    clock.advance(TTL_MS - 1);
    expect(store.get('k')).toEqual(cleanAnswer('Paris'));

    clock.advance(1);
    expect(store.get('k')).toBeNull();
    expect(store.size).toBe(0);
  });

  it('does not extend an entry on a hit', () => {
    const store = storeOf();
    store.set('k', cleanAnswer('Paris'), TTL_MS);

    for (let second = 1; second < 60; second++) {
      clock.advance(1_000);
      expect(store.get('k')).not.toBeNull();
    }
    clock.advance(1_000);

    expect(store.get('k')).toBeNull();
  });

  describe('maxEntries', () => {
    it('evicts the least recently used entry first', () => {
      const store = storeOf({ maxEntries: 3 });
      for (const key of ['a', 'b', 'c']) store.set(key, cleanAnswer(key), TTL_MS);
      store.get('a');

      store.set('d', cleanAnswer('d'), TTL_MS);

      expect(store.size).toBe(3);
      expect(store.get('b')).toBeNull();
      for (const key of ['a', 'c', 'd']) expect(store.get(key)).toEqual(cleanAnswer(key));
    });

    it('counts an overwritten key once', () => {
      const store = storeOf({ maxEntries: 2 });
      store.set('a', cleanAnswer('a'), TTL_MS);
      store.set('b', cleanAnswer('b'), TTL_MS);

      store.set('a', cleanAnswer('a2'), TTL_MS);

      expect(store.size).toBe(2);
      expect(store.get('a')).toEqual(cleanAnswer('a2'));
      expect(store.get('b')).toEqual(cleanAnswer('b'));
    });

    it('stores nothing with a bound of 0', () => {
      const store = storeOf({ maxEntries: 0 });

      store.set('a', cleanAnswer('a'), TTL_MS);

      expect(store.get('a')).toBeNull();
      expect(store.usage()).toEqual({ entries: 0, bytes: 0 });
    });
  });

  describe('maxBytes', () => {
    it('counts the UTF-8 bytes of each answer’s JSON, and gives them back when it drops one', () => {
      const store = storeOf();
      const ascii = cleanAnswer('Paris');
      const wide = cleanAnswer('東京 🗼');

      store.set('a', ascii, TTL_MS);
      store.set('b', wide, TTL_MS);
      expect(store.usage()).toEqual({ entries: 2, bytes: bytesOf(ascii) + bytesOf(wide) });
      expect(bytesOf(wide)).toBeGreaterThan(JSON.stringify(wide).length);

      store.set('a', cleanAnswer('Lyon'), TTL_MS);
      expect(store.bytes).toBe(bytesOf(cleanAnswer('Lyon')) + bytesOf(wide));

      clock.advance(TTL_MS);
      store.get('a');
      store.get('b');
      expect(store.usage()).toEqual({ entries: 0, bytes: 0 });
    });

    it('evicts least recently used entries until the new one fits', () => {
      const size = bytesOf(cleanAnswer('a'));
      const store = storeOf({ maxBytes: 3 * size });
      for (const key of ['a', 'b', 'c']) store.set(key, cleanAnswer(key), TTL_MS);
      store.get('a');

      // Half again the size of the others: the two least recently used make room for it.
      const big = cleanAnswer('x'.repeat(Math.floor(size / 2)));
      expect(bytesOf(big)).toBeGreaterThan(size);
      expect(bytesOf(big)).toBeLessThanOrEqual(2 * size);
      store.set('big', big, TTL_MS);

      expect(store.get('b')).toBeNull();
      expect(store.get('c')).toBeNull();
      expect(store.get('a')).toEqual(cleanAnswer('a'));
      expect(store.get('big')).toEqual(big);
      expect(store.bytes).toBeLessThanOrEqual(3 * size);
    });

    it('does not store an answer larger than maxBytes, and keeps every other entry', () => {
      const store = storeOf({ maxBytes: 2_000 });
      store.set('small', cleanAnswer('Paris'), TTL_MS);
      const huge = cleanAnswer('x'.repeat(2_000));

      store.set('huge', huge, TTL_MS);

      expect(store.get('huge')).toBeNull();
      expect(store.get('small')).toEqual(cleanAnswer('Paris'));
    });

    it('forgets what a key held when its new answer is too large to store', () => {
      const store = storeOf({ maxBytes: 2_000 });
      store.set('k', cleanAnswer('Paris'), TTL_MS);

      store.set('k', cleanAnswer('x'.repeat(2_000)), TTL_MS);

      expect(store.get('k')).toBeNull();
      expect(store.usage()).toEqual({ entries: 0, bytes: 0 });
    });

    it('stores an answer of exactly maxBytes', () => {
      const answer = cleanAnswer('Paris');
      const store = storeOf({ maxBytes: bytesOf(answer) });

      store.set('k', answer, TTL_MS);

      expect(store.get('k')).toEqual(answer);
    });
  });

  it('drops expired entries nobody asks for, a few per decision', () => {
    const store = storeOf();
    for (let index = 0; index < 100; index++) store.set(`old-${index}`, cleanAnswer('Paris'), 1_000);
    clock.advance(1_000);

    for (let index = 0; index < 60; index++) store.get('absent');

    expect(store.size).toBe(0);
    expect(store.bytes).toBe(0);
  });

  it('holds only the live entries, and a few expired ones, while entries come and go', () => {
    const store = storeOf({ maxEntries: 100_000 });
    // One entry a second, each for 10 s: 10 live, plus those expired since the sweep last passed.
    let most = 0;
    for (let index = 0; index < 2_000; index++) {
      clock.advance(1_000);
      store.set(`k-${index}`, cleanAnswer('Paris'), 10_000);
      most = Math.max(most, store.size);
    }
    expect(most).toBeLessThanOrEqual(15);
  });

  it.each([
    ['maxEntries', { maxEntries: -1 }],
    ['maxEntries', { maxEntries: 1.5 }],
    ['maxBytes', { maxBytes: Number.NaN }],
    ['maxBytes', { maxBytes: Number.POSITIVE_INFINITY }],
  ])('rejects an impossible %s with a RangeError', (_label, bounds) => {
    expect(() => storeOf(bounds)).toThrow(RangeError);
  });

  it('never reports an error', () => {
    const store = storeOf();
    const errors: unknown[] = [];
    const stop = store.onError((error) => errors.push(error));

    store.set('k', cleanAnswer('Paris'), TTL_MS);
    store.get('k');
    stop();

    expect(errors).toEqual([]);
  });
});
