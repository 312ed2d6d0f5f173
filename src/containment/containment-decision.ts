import type { ContainmentPosture, ContainmentSnapshot } from './containment-snapshot';

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

const decisions = new Map<string, ContainmentDecision>();

/** Decisions are few and immutable: one shared object per outcome, so routing allocates nothing. */
function decision(pool: PoolName, reason: RouteReason, contained: boolean, deny = false): ContainmentDecision {
  const key = `${pool}/${reason}/${contained}/${deny}`;
  let found = decisions.get(key);
  if (!found) {
    found = Object.freeze({ pool, reason, contained, deny });
    decisions.set(key, found);
  }
  return found;
}

/**
 * The routing table of DESIGN.md, failing closed toward isolation: only a snapshot of exactly
 * this tenant saying `not_contained` or `released` gives the normal pool. `snapshot` is
 * undefined when the store failed.
 */
export function decide(
  tenant: string,
  known: boolean,
  snapshot: ContainmentSnapshot | null | undefined,
): ContainmentDecision {
  if (!known) return decision('isolated', 'anonymous', true);
  if (snapshot === undefined) return decision('isolated', 'store_error', true);
  if (snapshot === null) return decision('isolated', 'no_snapshot', true);
  if (snapshot.tenant !== tenant) return decision('isolated', 'tenant_mismatch', true);
  switch (snapshot.state) {
    case 'not_contained':
    case 'released':
      return decision('normal', snapshot.state, false);
    case 'active':
    case 'indeterminate':
      return decision('isolated', snapshot.state, true, isHard(snapshot.posture));
    default:
      return decision('isolated', 'store_error', true);
  }
}

function isHard(posture: ContainmentPosture): boolean {
  return posture === 'hard';
}
