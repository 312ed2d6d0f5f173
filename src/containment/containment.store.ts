import type { Awaitable } from '../common';
import type { ContainmentChange, ContainmentSnapshot } from './containment-snapshot';

/**
 * Containment snapshots per tenant, as whole decisions, so that a Redis store answers each
 * with one script: read the current snapshot; write a change (the version grows atomically);
 * seed a first snapshot only where none exists. The memory store answers at once, the Redis
 * store with a promise.
 */
export interface ContainmentStore {
  /** The tenant's snapshot, or null when none was ever written. */
  read(tenant: string): Awaitable<ContainmentSnapshot | null>;
  /** Writes `change` as the next version; `atMs` is the wall-clock time of the change. */
  write(tenant: string, change: ContainmentChange, atMs: number): Awaitable<ContainmentSnapshot>;
  /** Writes `change` as version 1 unless the tenant already has a snapshot; returns the current one. */
  seed(tenant: string, change: ContainmentChange, atMs: number): Awaitable<ContainmentSnapshot>;
}

/** Injection token of the {@link ContainmentStore}. */
export const ContainmentStore = Symbol('ContainmentStore');
