import { FakeClock } from '../../../common/fake-clock';
import { cleanAnswer } from '../llm-cache-store.contract';
import { normalised } from './embedder';
import { MemorySemanticCacheStore, type MemorySemanticCacheStoreOptions } from './memory-semantic-cache.store';

const ROOMY: MemorySemanticCacheStoreOptions = { maxEntries: 100, maxEntriesPerPartition: 100, maxBytes: 1024 * 1024 };
const TTL_MS = 60_000;

const unit = (...values: number[]) => normalised(Float32Array.from(values));
/** Three directions: X and NEAR_X are 0.995 similar, Y is orthogonal to both. */
const X = unit(1, 0, 0);
const NEAR_X = unit(1, 0.1, 0);
const Y = unit(0, 1, 0);

describe('MemorySemanticCacheStore', () => {
  let clock: FakeClock;

  beforeEach(() => {
    clock = new FakeClock();
  });

  const storeOf = (bounds: Partial<MemorySemanticCacheStoreOptions> = {}) =>
    new MemorySemanticCacheStore(clock, { ...ROOMY, ...bounds });
  const textOf = (match: { completion: { choices: Array<{ message: { content: string | null } }> } } | null) =>
    match?.completion.choices[0].message.content;

  it('answers the entry at least as similar as asked, with its similarity, at once', () => {
    const store = storeOf();
    expect(store.add('p', 'q1', X, cleanAnswer('Paris'), TTL_MS)).toBeUndefined();

    const match = store.nearest('p', NEAR_X, 0.99);

    expect(match).toEqual({ completion: cleanAnswer('Paris'), similarity: expect.closeTo(0.995, 3) });
    expect(store.nearest('p', NEAR_X, 0.999)).toBeNull();
    expect(store.nearest('p', Y, 0.5)).toBeNull();
  });

  it('answers the most similar entry of the partition', () => {
    const store = storeOf();
    store.add('p', 'y', Y, cleanAnswer('Y'), TTL_MS);
    store.add('p', 'near', NEAR_X, cleanAnswer('near X'), TTL_MS);
    store.add('p', 'x', X, cleanAnswer('X'), TTL_MS);

    expect(textOf(store.nearest('p', X, 0.5))).toBe('X');
    expect(textOf(store.nearest('p', unit(1, 0.12, 0), 0.5))).toBe('near X');
  });

  it('compares only inside one partition', () => {
    const store = storeOf();
    store.add('tenant-a', 'q', X, cleanAnswer('for A'), TTL_MS);

    expect(store.nearest('tenant-b', X, 0.1)).toBeNull();
  });

  it('never matches a vector of another length', () => {
    const store = storeOf();
    store.add('p', 'q', X, cleanAnswer('Paris'), TTL_MS);

    expect(store.nearest('p', unit(1, 0), 0.01)).toBeNull();
  });

  it('hands out copies: neither the caller’s vector nor a hit’s answer can change what it holds', () => {
    const store = storeOf();
    const vector = unit(1, 0, 0);
    store.add('p', 'q', vector, cleanAnswer('Paris'), TTL_MS);
    vector.set([0, 1, 0]);
    const first = store.nearest('p', X, 0.99)!;
    first.completion.choices[0].message.content = 'tampered';

    expect(textOf(store.nearest('p', X, 0.99))).toBe('Paris');
  });

  it('hits until the last millisecond of the TTL and drops the entry from its end on', () => {
    const store = storeOf();
    store.add('p', 'q', X, cleanAnswer('Paris'), TTL_MS);

    clock.advance(TTL_MS - 1);
    expect(textOf(store.nearest('p', X, 0.9))).toBe('Paris');

    clock.advance(1);
    expect(store.nearest('p', X, 0.9)).toBeNull();
    expect(store.usage()).toEqual({ entries: 0, partitions: 0, bytes: 0 });
  });

  it('replaces the entry of a question stored again, with its new TTL', () => {
    const store = storeOf();
    store.add('p', 'q', X, cleanAnswer('old'), TTL_MS);
    clock.advance(TTL_MS - 1);
    store.add('p', 'q', X, cleanAnswer('new'), TTL_MS);

    clock.advance(TTL_MS - 1);
    expect(textOf(store.nearest('p', X, 0.9))).toBe('new');
    expect(store.usage().entries).toBe(1);
  });

  it('stores nothing for a TTL of 0, and removes what the question had', () => {
    const store = storeOf();
    store.add('p', 'q', X, cleanAnswer('Paris'), TTL_MS);

    store.add('p', 'q', X, cleanAnswer('Paris'), 0);

    expect(store.nearest('p', X, 0.1)).toBeNull();
    expect(store.usage().entries).toBe(0);
  });

  it('evicts the least recently used entry over maxEntries, across partitions', () => {
    const store = storeOf({ maxEntries: 2 });
    store.add('a', 'q', X, cleanAnswer('a'), TTL_MS);
    store.add('b', 'q', X, cleanAnswer('b'), TTL_MS);
    // A hit makes `a` the most recently used: `b` goes next.
    expect(textOf(store.nearest('a', X, 0.9))).toBe('a');

    store.add('c', 'q', X, cleanAnswer('c'), TTL_MS);

    expect(store.usage()).toMatchObject({ entries: 2, partitions: 2 });
    expect(store.nearest('b', X, 0.1)).toBeNull();
    expect(textOf(store.nearest('a', X, 0.9))).toBe('a');
    expect(textOf(store.nearest('c', X, 0.9))).toBe('c');
  });

  it('holds at most maxEntriesPerPartition in one partition, evicting that partition’s own least recently used', () => {
    const store = storeOf({ maxEntriesPerPartition: 2 });
    store.add('other', 'q', Y, cleanAnswer('other'), TTL_MS);
    store.add('p', 'x', X, cleanAnswer('x'), TTL_MS);
    store.add('p', 'y', Y, cleanAnswer('y'), TTL_MS);
    expect(textOf(store.nearest('p', X, 0.9))).toBe('x');

    store.add('p', 'near', NEAR_X, cleanAnswer('near'), TTL_MS);

    expect(store.usage()).toMatchObject({ entries: 3, partitions: 2 });
    expect(store.nearest('p', Y, 0.9)).toBeNull();
    expect(textOf(store.nearest('other', Y, 0.9))).toBe('other');
  });

  it('evicts the oldest entries over maxBytes, and never stores an answer larger than it', () => {
    const oneEntry = Buffer.byteLength(JSON.stringify(cleanAnswer('a')), 'utf8') + 3 * 4;
    const store = storeOf({ maxBytes: 2 * oneEntry });
    store.add('p', 'a', X, cleanAnswer('a'), TTL_MS);
    store.add('p', 'b', Y, cleanAnswer('b'), TTL_MS);
    expect(store.usage()).toEqual({ entries: 2, partitions: 1, bytes: 2 * oneEntry });

    store.add('p', 'c', NEAR_X, cleanAnswer('c'), TTL_MS);
    expect(store.usage()).toEqual({ entries: 2, partitions: 1, bytes: 2 * oneEntry });
    // `a`, the oldest, went to make room for `c`.
    expect(store.nearest('p', X, 0.999)).toBeNull();

    store.add('p', 'huge', X, cleanAnswer('x'.repeat(2 * oneEntry)), TTL_MS);
    expect(store.usage().entries).toBe(2);
  });

  it('stores nothing with maxEntries 0', () => {
    const store = storeOf({ maxEntries: 0 });
    store.add('p', 'q', X, cleanAnswer('Paris'), TTL_MS);

    expect(store.usage().entries).toBe(0);
  });

  it.each([-1, 1.5, Number.NaN])('refuses a TTL of %p with a RangeError', (ttlMs) => {
    expect(() => storeOf().add('p', 'q', X, cleanAnswer('Paris'), ttlMs)).toThrow(RangeError);
  });

  it.each<Partial<MemorySemanticCacheStoreOptions>>([
    { maxEntries: -1 },
    { maxBytes: 1.5 },
    { maxEntriesPerPartition: 0 },
  ])('refuses the bounds %p with a RangeError', (bounds) => {
    expect(() => storeOf(bounds)).toThrow(RangeError);
  });
});
