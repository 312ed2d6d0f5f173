/** Where a tenant stands: the operators' decision, read once per call. */
export type ContainmentState = 'not_contained' | 'active' | 'released' | 'indeterminate';
/** `hard`: a contained tenant may do nothing; `degraded`: it runs, in the isolated pool. */
export type ContainmentPosture = 'hard' | 'degraded';

export const CONTAINMENT_STATES: readonly ContainmentState[] = ['not_contained', 'active', 'released', 'indeterminate'];
export const CONTAINMENT_POSTURES: readonly ContainmentPosture[] = ['hard', 'degraded'];

export interface ContainmentSnapshot {
  tenant: string;
  state: ContainmentState;
  posture: ContainmentPosture;
  /** Why, in the operator's words (at most 500 characters). */
  reason: string;
  /** Grows by one with every change, per tenant. */
  version: number;
  /** ISO time of the change. */
  updatedAt: string;
}

/** What an operator sets. */
export interface ContainmentChange {
  state: ContainmentState;
  posture: ContainmentPosture;
  reason: string;
}
