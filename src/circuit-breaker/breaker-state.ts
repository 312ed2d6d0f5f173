import type { Clock } from '../common';
import type { BreakerEvents, CircuitState } from './breaker-events';
import { type BreakerPhase, circuitStateOf, CLOSED } from './breaker-phase';
import { HalfOpenProbes } from './half-open-probes';
import { HalfOpenSuspect } from './half-open-suspect';
import type { TenantCircuits } from './tenant-circuits';

/**
 * The one owner of a breaker's state: its {@link BreakerPhase}, and every move from one phase to
 * the next, each change of circuit state reported once ({@link BreakerEvents}). The engine's
 * flags are never read: the breaker moves this on the engine's reports and its own decisions.
 */
export class BreakerState {
  private current: BreakerPhase = CLOSED;

  constructor(
    private readonly clock: Clock,
    private readonly probeSlots: number,
    private readonly tenants: TenantCircuits,
    private readonly events: BreakerEvents,
  ) {}

  get phase(): BreakerPhase {
    return this.current;
  }

  get circuitState(): CircuitState {
    return circuitStateOf(this.current);
  }

  /**
   * Opens: on the engine's failures, on slow calls, or `heldByOperator` (it then does not
   * half-open until closed). Open already, it stays open as it was, held from now if asked.
   */
  open(heldByOperator: boolean): void {
    const from = this.current;
    if (from.name === 'stopped') return;
    if (from.name === 'open') {
      if (heldByOperator && !from.heldByOperator) this.current = { ...from, heldByOperator };
      return;
    }
    // Opened again from half open: the dependency's failure, not the suspect's.
    const suspect = from.name === 'half_open' ? from.suspect.end() : undefined;
    if (suspect !== undefined) this.tenants.close(suspect);
    this.moveTo({ name: 'open', openedAt: this.clock.now(), heldByOperator, suspect: new HalfOpenSuspect() });
  }

  /**
   * The open time passed: half open, with a new period's probes and the suspect of the time it
   * was open. False when an operator holds it open: the engine is to open again at once.
   */
  halfOpen(): boolean {
    const from = this.current;
    if (from.name !== 'open') return true;
    if (from.heldByOperator) return false;
    this.moveTo({ name: 'half_open', probes: new HalfOpenProbes(this.probeSlots), suspect: from.suspect });
    return true;
  }

  /** Closes. A suspect of the half-open period stays refused alone: another tenant was served right after it failed. */
  close(): void {
    if (this.current.name !== 'stopped') this.moveTo(CLOSED);
  }

  /** Shut down, for good: it shows the state it stopped in. */
  stop(): void {
    this.current = { name: 'stopped', last: circuitStateOf(this.current) };
  }

  private moveTo(to: BreakerPhase): void {
    const from = circuitStateOf(this.current);
    this.current = to;
    const state = circuitStateOf(to);
    if (state !== from) this.events.stateChanged(state, from);
  }
}
