import { describeContainmentStore } from './containment-store.contract';
import { MemoryContainmentStore } from './memory-containment.store';

describeContainmentStore('MemoryContainmentStore', () => new MemoryContainmentStore());

describe('MemoryContainmentStore', () => {
  it('keeps its snapshots to itself: two stores do not share tenants', () => {
    const first = new MemoryContainmentStore();
    const second = new MemoryContainmentStore();

    first.write('acme', { state: 'active', posture: 'hard', reason: 'incident' }, Date.UTC(2026, 0, 1));

    expect(second.read('acme')).toBeNull();
  });

  it('answers snapshots that a caller cannot change in the store', () => {
    const store = new MemoryContainmentStore();
    const written = store.write('acme', { state: 'active', posture: 'hard', reason: 'incident' }, 0);

    expect(() => {
      (written as { state: string }).state = 'not_contained';
    }).toThrow(TypeError);
    expect(store.read('acme')).toMatchObject({ state: 'active' });
  });

  it('answers at once, without a promise: a call routed through it waits for nothing', () => {
    const store = new MemoryContainmentStore();

    expect(store.seed('acme', { state: 'not_contained', posture: 'degraded', reason: '' }, 0)).toMatchObject({
      version: 1,
    });
    expect(store.read('acme')).toMatchObject({ tenant: 'acme', state: 'not_contained' });
  });
});
