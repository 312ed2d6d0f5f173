import type { ContainmentChange, ContainmentSnapshot } from './containment-snapshot';
import type { ContainmentStore } from './containment.store';

/** The embedded containment store: one process, snapshots in a map. */
export class MemoryContainmentStore implements ContainmentStore {
  private readonly snapshots = new Map<string, ContainmentSnapshot>();

  read(tenant: string): Promise<ContainmentSnapshot | null> {
    return Promise.resolve(this.snapshots.get(tenant) ?? null);
  }

  write(tenant: string, change: ContainmentChange, atMs: number): Promise<ContainmentSnapshot> {
    const version = (this.snapshots.get(tenant)?.version ?? 0) + 1;
    const snapshot = Object.freeze({ tenant, ...change, version, updatedAt: new Date(atMs).toISOString() });
    this.snapshots.set(tenant, snapshot);
    return Promise.resolve(snapshot);
  }

  seed(tenant: string, change: ContainmentChange, atMs: number): Promise<ContainmentSnapshot> {
    const existing = this.snapshots.get(tenant);
    return existing ? Promise.resolve(existing) : this.write(tenant, change, atMs);
  }
}
