import type { ContainmentSnapshot } from './containment-snapshot';

export type PoolName = 'normal' | 'isolated';
export const POOL_NAMES: readonly PoolName[] = ['normal', 'isolated'];

/** Why a call went where it went: the `reason` label of `bulkhead_containment_routes_total`. */
export type RouteReason =
  | 'not_contained'
  | 'released'
  | 'active'
  | 'indeterminate'
  | 'anonymous'
  | 'no_snapshot'
  | 'store_error'
  | 'tenant_mismatch';

export const ROUTE_REASONS: readonly RouteReason[] = [
  'not_contained',
  'released',
  'active',
  'indeterminate',
  'anonymous',
  'no_snapshot',
  'store_error',
  'tenant_mismatch',
];

/** Where one call goes: a pool, or refused (`hard` posture, contained tenant). */
export interface ContainmentDecision {
  pool: PoolName;
  reason: RouteReason;
  /**
   * The caller is contained, or unknown (anonymous, no snapshot, a store error): anything not
   * routed to the normal pool. `containment: deny` tools refuse it.
   */
  contained: boolean;
  /** Refuse the call before anything runs: contained under the `hard` posture. */
  deny: boolean;
}

/** Decisions are few and immutable: one shared object per outcome, so routing allocates nothing. */
function decision(pool: PoolName, reason: RouteReason, contained: boolean, deny = false): ContainmentDecision {
  return Object.freeze({ pool, reason, contained, deny });
}

const ROUTED = {
  notContained: decision('normal', 'not_contained', false),
  released: decision('normal', 'released', false),
  active: decision('isolated', 'active', true),
  activeHard: decision('isolated', 'active', true, true),
  indeterminate: decision('isolated', 'indeterminate', true),
  indeterminateHard: decision('isolated', 'indeterminate', true, true),
  anonymous: decision('isolated', 'anonymous', true),
  noSnapshot: decision('isolated', 'no_snapshot', true),
  storeError: decision('isolated', 'store_error', true),
  tenantMismatch: decision('isolated', 'tenant_mismatch', true),
} as const;

/**
 * The routing table of docs/design.md ("Containment"), failing closed toward isolation: only a snapshot of exactly
 * this tenant saying `not_contained` or `released` gives the normal pool. `snapshot` is
 * undefined when the store failed.
 */
export function decide(
  tenant: string,
  known: boolean,
  snapshot: ContainmentSnapshot | null | undefined,
): ContainmentDecision {
  if (!known) return ROUTED.anonymous;
  if (snapshot === undefined) return ROUTED.storeError;
  if (snapshot === null) return ROUTED.noSnapshot;
  if (snapshot.tenant !== tenant) return ROUTED.tenantMismatch;
  const hard = snapshot.posture === 'hard';
  switch (snapshot.state) {
    case 'not_contained':
      return ROUTED.notContained;
    case 'released':
      return ROUTED.released;
    case 'active':
      return hard ? ROUTED.activeHard : ROUTED.active;
    case 'indeterminate':
      return hard ? ROUTED.indeterminateHard : ROUTED.indeterminate;
    default:
      // A state this version does not know: fail closed.
      return ROUTED.storeError;
  }
}
