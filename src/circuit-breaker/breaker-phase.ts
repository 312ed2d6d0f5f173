import type { CircuitState } from './breaker-events';
import type { HalfOpenProbes } from './half-open-probes';
import type { HalfOpenSuspect } from './half-open-suspect';

/** Closed: every call goes through and is counted. */
export interface ClosedPhase {
  readonly name: 'closed';
}

/** Open: every call is refused until the open time passes (or, held by an operator, until closed). */
export interface OpenPhase {
  readonly name: 'open';
  /** When it opened, on the injected clock: the Retry-After counts from it. */
  readonly openedAt: number;
  /** An operator opened it: it does not half-open until an operator closes it. */
  readonly heldByOperator: boolean;
  /** The tenants refused since it opened, carried into half open. */
  readonly suspect: HalfOpenSuspect;
}

/** Half open: its probes go through, the rest is refused. */
export interface HalfOpenPhase {
  readonly name: 'half_open';
  /** This period's probes: who probes, and when enough succeeded to close. */
  readonly probes: HalfOpenProbes;
  /** Whose a failure now is: a tenant's own, or the dependency's. */
  readonly suspect: HalfOpenSuspect;
}

/** Shut down: refuses nothing, counts nothing; shows the state it stopped in. */
export interface StoppedPhase {
  readonly name: 'stopped';
  readonly last: CircuitState;
}

/**
 * Where a breaker is, and what only that phase has: the one place its state lives. The breaker
 * moves from one to the next on its engine's events and its own decisions; the engine's flags
 * are never read.
 */
export type BreakerPhase = ClosedPhase | OpenPhase | HalfOpenPhase | StoppedPhase;

export const CLOSED: ClosedPhase = Object.freeze({ name: 'closed' });

/** The circuit state `phase` shows: a stopped breaker shows the one it stopped in. */
export function circuitStateOf(phase: BreakerPhase): CircuitState {
  return phase.name === 'stopped' ? phase.last : phase.name;
}
