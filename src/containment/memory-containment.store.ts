import type { ContainmentChange, ContainmentSnapshot } from './containment-snapshot';
import type { ContainmentStore } from './containment.store';

/** The embedded containment store: one process, snapshots in a map; it answers at once. */
export class MemoryContainmentStore implements ContainmentStore {
  private readonly snapshots = new Map<string, ContainmentSnapshot>();

  read(tenant: string): ContainmentSnapshot | null {
    return this.snapshots.get(tenant) ?? null;
  }

  write(tenant: string, change: ContainmentChange, atMs: number): ContainmentSnapshot {
    const version = (this.snapshots.get(tenant)?.version ?? 0) + 1;
    const snapshot = Object.freeze({ tenant, ...change, version, updatedAt: new Date(atMs).toISOString() });
    this.snapshots.set(tenant, snapshot);
    return snapshot;
  }

  seed(tenant: string, change: ContainmentChange, atMs: number): ContainmentSnapshot {
    return this.snapshots.get(tenant) ?? this.write(tenant, change, atMs);
  }
}
