import { type ContainmentDecision, decide, ROUTE_REASONS } from './containment-decision';
import {
  CONTAINMENT_POSTURES,
  type ContainmentPosture,
  type ContainmentSnapshot,
  type ContainmentState,
} from './containment-snapshot';

function snapshot(
  state: ContainmentState,
  posture: ContainmentPosture = 'degraded',
  tenant = 'acme',
): ContainmentSnapshot {
  return { tenant, state, posture, reason: 'set by an operator', version: 3, updatedAt: '2026-01-01T00:00:00.000Z' };
}

describe('decide', () => {
  describe('a known tenant with its own snapshot', () => {
    it.each<[ContainmentState, ContainmentPosture, ContainmentDecision]>([
      ['not_contained', 'degraded', { pool: 'normal', reason: 'not_contained', contained: false, deny: false }],
      ['not_contained', 'hard', { pool: 'normal', reason: 'not_contained', contained: false, deny: false }],
      ['released', 'degraded', { pool: 'normal', reason: 'released', contained: false, deny: false }],
      ['released', 'hard', { pool: 'normal', reason: 'released', contained: false, deny: false }],
      ['active', 'degraded', { pool: 'isolated', reason: 'active', contained: true, deny: false }],
      ['active', 'hard', { pool: 'isolated', reason: 'active', contained: true, deny: true }],
      ['indeterminate', 'degraded', { pool: 'isolated', reason: 'indeterminate', contained: true, deny: false }],
      ['indeterminate', 'hard', { pool: 'isolated', reason: 'indeterminate', contained: true, deny: true }],
    ])('routes state %s under posture %s to %o', (state, posture, expected) => {
      expect(decide('acme', true, snapshot(state, posture))).toEqual(expected);
    });
  });

  describe('failing closed toward isolation', () => {
    it.each<[string, ContainmentSnapshot | null | undefined]>([
      ['not_contained', snapshot('not_contained')],
      ['released', snapshot('released')],
      ['no snapshot', null],
      ['a store error', undefined],
    ])('routes an unknown caller with %s to isolated, reason anonymous', (_case, given) => {
      expect(decide('anonymous', false, given)).toEqual({
        pool: 'isolated',
        reason: 'anonymous',
        contained: true,
        deny: false,
      });
    });

    it('routes an unknown caller to isolated even with a not_contained snapshot of its own name', () => {
      expect(decide('anonymous', false, snapshot('not_contained', 'degraded', 'anonymous'))).toMatchObject({
        pool: 'isolated',
        reason: 'anonymous',
      });
    });

    it('routes a store error (undefined) to isolated, reason store_error', () => {
      expect(decide('acme', true, undefined)).toEqual({
        pool: 'isolated',
        reason: 'store_error',
        contained: true,
        deny: false,
      });
    });

    it('routes a tenant without a snapshot (null) to isolated, reason no_snapshot', () => {
      expect(decide('acme', true, null)).toEqual({
        pool: 'isolated',
        reason: 'no_snapshot',
        contained: true,
        deny: false,
      });
    });

    it.each<ContainmentState>(['not_contained', 'released', 'active', 'indeterminate'])(
      "routes another tenant's %s snapshot to isolated, reason tenant_mismatch",
      (state) => {
        expect(decide('acme', true, snapshot(state, 'degraded', 'globex'))).toEqual({
          pool: 'isolated',
          reason: 'tenant_mismatch',
          contained: true,
          deny: false,
        });
      },
    );

    it.each(['ACME', 'acme ', ' acme', ''])(
      "treats a snapshot of '%s' as another tenant's for tenant acme",
      (tenant) => {
        expect(decide('acme', true, snapshot('not_contained', 'degraded', tenant))).toMatchObject({
          pool: 'isolated',
          reason: 'tenant_mismatch',
        });
      },
    );

    it.each(['contained', 'NOT_CONTAINED', '', 'unknown'])("routes an unexpected state '%s' to isolated", (state) => {
      const odd = { ...snapshot('not_contained'), state: state as ContainmentState };

      const decision = decide('acme', true, odd);

      expect(decision.pool).toBe('isolated');
      expect(decision.contained).toBe(true);
      expect(ROUTE_REASONS).toContain(decision.reason);
    });

    it.each(CONTAINMENT_POSTURES)('never sends a fail-closed decision to normal, under posture %s', (posture) => {
      const cases: Array<[string, boolean, ContainmentSnapshot | null | undefined]> = [
        ['anonymous', false, snapshot('not_contained', posture)],
        ['acme', true, undefined],
        ['acme', true, null],
        ['acme', true, snapshot('released', posture, 'globex')],
      ];

      for (const [tenant, known, given] of cases) expect(decide(tenant, known, given).pool).toBe('isolated');
    });
  });

  describe('shared decisions', () => {
    it('answers the same frozen object for the same outcome', () => {
      const first = decide('acme', true, snapshot('active', 'hard'));
      const second = decide('globex', true, snapshot('active', 'hard', 'globex'));

      expect(second).toBe(first);
      expect(Object.isFrozen(first)).toBe(true);
    });

    it.each<[string, () => ContainmentDecision]>([
      ['not_contained', () => decide('acme', true, snapshot('not_contained'))],
      ['released', () => decide('acme', true, snapshot('released'))],
      ['active degraded', () => decide('acme', true, snapshot('active'))],
      ['indeterminate hard', () => decide('acme', true, snapshot('indeterminate', 'hard'))],
      ['anonymous', () => decide('anonymous', false, null)],
      ['store_error', () => decide('acme', true, undefined)],
      ['no_snapshot', () => decide('acme', true, null)],
      ['tenant_mismatch', () => decide('acme', true, snapshot('active', 'hard', 'globex'))],
    ])('reuses one frozen decision for %s', (_case, make) => {
      const decision = make();

      expect(make()).toBe(decision);
      expect(Object.isFrozen(decision)).toBe(true);
      expect(() => {
        (decision as { pool: string }).pool = 'normal';
      }).toThrow(TypeError);
    });

    it('gives different outcomes different objects', () => {
      const outcomes = [
        decide('acme', true, snapshot('not_contained')),
        decide('acme', true, snapshot('released')),
        decide('acme', true, snapshot('active')),
        decide('acme', true, snapshot('active', 'hard')),
        decide('acme', true, snapshot('indeterminate')),
        decide('acme', true, snapshot('indeterminate', 'hard')),
        decide('anonymous', false, null),
        decide('acme', true, undefined),
        decide('acme', true, null),
        decide('acme', true, snapshot('active', 'degraded', 'globex')),
      ];

      expect(new Set(outcomes).size).toBe(outcomes.length);
    });

    it('does not depend on the snapshot version, reason or time', () => {
      const older = decide('acme', true, snapshot('active'));
      const newer = decide('acme', true, {
        ...snapshot('active'),
        version: 99,
        reason: 'another reason',
        updatedAt: '2027-06-01T00:00:00.000Z',
      });

      expect(newer).toBe(older);
    });
  });
});
