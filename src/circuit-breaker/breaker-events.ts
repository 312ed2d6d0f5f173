import { Listeners } from '../common';
import type { ProbeOutcome } from './half-open-probes';

export type CircuitState = 'closed' | 'open' | 'half_open';

export type CircuitStateListener = (to: CircuitState, from: CircuitState) => void;

/**
 * The listeners of one breaker's events, for metrics and the ledger (mechanisms never import
 * prom-client): each `on…` returns a function that removes its listener, as cockatiel's do.
 */
export class BreakerEvents {
  private readonly stateChanges = new Listeners<[to: CircuitState, from: CircuitState]>();
  private readonly slowCalls = new Listeners<[]>();
  private readonly probes = new Listeners<[outcome: ProbeOutcome]>();

  onStateChange(listener: CircuitStateListener): () => void {
    return this.stateChanges.add(listener);
  }

  onSlowCall(listener: () => void): () => void {
    return this.slowCalls.add(listener);
  }

  onProbe(listener: (outcome: ProbeOutcome) => void): () => void {
    return this.probes.add(listener);
  }

  stateChanged(to: CircuitState, from: CircuitState): void {
    this.stateChanges.emit(to, from);
  }

  slowCall(): void {
    this.slowCalls.emit();
  }

  probe(outcome: ProbeOutcome): void {
    this.probes.emit(outcome);
  }

  /** Drops every listener: the breaker shut down. */
  clear(): void {
    this.stateChanges.clear();
    this.slowCalls.clear();
    this.probes.clear();
  }
}
