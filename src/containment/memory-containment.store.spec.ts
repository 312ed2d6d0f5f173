import { describeContainmentStore } from './containment-store.contract';
import { MemoryContainmentStore } from './memory-containment.store';

describeContainmentStore('MemoryContainmentStore', () => new MemoryContainmentStore());

describe('MemoryContainmentStore', () => {
  it('keeps its snapshots to itself: two stores do not share tenants', async () => {
    const first = new MemoryContainmentStore();
    const second = new MemoryContainmentStore();

    await first.write('acme', { state: 'active', posture: 'hard', reason: 'incident' }, Date.UTC(2026, 0, 1));

    await expect(second.read('acme')).resolves.toBeNull();
  });

  it('answers snapshots that a caller cannot change in the store', async () => {
    const store = new MemoryContainmentStore();
    const written = await store.write('acme', { state: 'active', posture: 'hard', reason: 'incident' }, 0);

    expect(() => {
      (written as { state: string }).state = 'not_contained';
    }).toThrow(TypeError);
    await expect(store.read('acme')).resolves.toMatchObject({ state: 'active' });
  });
});
