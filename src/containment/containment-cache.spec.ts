import { ContainmentCache } from './containment-cache';
import type { ContainmentSnapshot } from './containment-snapshot';

const snapshot = (tenant: string, version = 1): ContainmentSnapshot =>
  Object.freeze({
    tenant,
    state: 'not_contained',
    posture: 'degraded',
    reason: '',
    version,
    updatedAt: '2026-01-01T00:00:00.000Z',
  });

function liveCache(maxEntries?: number): ContainmentCache {
  const cache = new ContainmentCache(maxEntries);
  cache.setLive(true);
  return cache;
}

describe('ContainmentCache', () => {
  it('keeps nothing while not live', () => {
    const cache = new ContainmentCache();

    cache.put('acme', snapshot('acme'), cache.ticket());

    expect(cache.ticket()).toBeUndefined();
    expect(cache.get('acme')).toBeUndefined();
  });

  it('answers a snapshot it was given while live', () => {
    const cache = liveCache();

    cache.put('acme', snapshot('acme'), cache.ticket());

    expect(cache.get('acme')).toEqual(snapshot('acme'));
  });

  it('drops a tenant that is invalidated, and only that one', () => {
    const cache = liveCache();
    cache.put('acme', snapshot('acme'), cache.ticket());
    cache.put('globex', snapshot('globex'), cache.ticket());

    cache.invalidate('acme');

    expect(cache.get('acme')).toBeUndefined();
    expect(cache.get('globex')).toEqual(snapshot('globex'));
  });

  it('does not keep a read that started before an invalidation', () => {
    const cache = liveCache();
    const ticket = cache.ticket();

    cache.invalidate('acme');
    cache.put('acme', snapshot('acme', 1), ticket);

    expect(cache.get('acme')).toBeUndefined();
  });

  it("does not keep a read that started before another tenant's invalidation either", () => {
    const cache = liveCache();
    const ticket = cache.ticket();

    cache.invalidate('globex');
    cache.put('acme', snapshot('acme'), ticket);

    expect(cache.get('acme')).toBeUndefined();
  });

  it('does not keep a read that started before the cache went off and on again', () => {
    const cache = liveCache();
    const ticket = cache.ticket();

    cache.setLive(false);
    cache.setLive(true);
    cache.put('acme', snapshot('acme'), ticket);

    expect(cache.get('acme')).toBeUndefined();
  });

  it('drops everything when it goes off', () => {
    const cache = liveCache();
    cache.put('acme', snapshot('acme'), cache.ticket());

    cache.setLive(false);
    cache.setLive(true);

    expect(cache.size).toBe(0);
  });

  it('holds at most maxEntries, dropping the one kept the longest first', () => {
    const cache = liveCache(2);

    for (const tenant of ['a', 'b', 'c']) cache.put(tenant, snapshot(tenant), cache.ticket());

    expect(cache.size).toBe(2);
    expect(cache.get('a')).toBeUndefined();
    expect([cache.get('b')?.tenant, cache.get('c')?.tenant]).toEqual(['b', 'c']);
  });

  it('replaces a held tenant in place, without dropping another', () => {
    const cache = liveCache(2);
    cache.put('a', snapshot('a'), cache.ticket());
    cache.put('b', snapshot('b'), cache.ticket());

    cache.put('a', snapshot('a', 2), cache.ticket());

    expect(cache.size).toBe(2);
    expect(cache.get('a')?.version).toBe(2);
  });

  it('tells listeners of each change of liveness, once', () => {
    const cache = new ContainmentCache();
    const heard: boolean[] = [];
    const dispose = cache.onLiveChange((live) => heard.push(live));

    cache.setLive(true);
    cache.setLive(true);
    cache.setLive(false);
    dispose();
    cache.setLive(true);

    expect(heard).toEqual([true, false]);
  });

  it.each([-1, 1.5, Number.NaN])('refuses maxEntries %p', (maxEntries) => {
    expect(() => new ContainmentCache(maxEntries)).toThrow(RangeError);
  });
});
