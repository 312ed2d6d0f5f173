import type { ProbeOutcome } from './half-open-probes';

export type CircuitState = 'closed' | 'open' | 'half_open';

export type CircuitStateListener = (to: CircuitState, from: CircuitState) => void;

/**
 * The listeners of one breaker's events, for metrics and the ledger (mechanisms never import
 * prom-client): each `on…` returns a function that removes its listener, as cockatiel's do.
 */
export class BreakerEvents {
  private stateListeners: CircuitStateListener[] = [];
  private slowListeners: Array<() => void> = [];
  private probeListeners: Array<(outcome: ProbeOutcome) => void> = [];

  onStateChange(listener: CircuitStateListener): () => void {
    this.stateListeners.push(listener);
    return () => {
      this.stateListeners = this.stateListeners.filter((item) => item !== listener);
    };
  }

  onSlowCall(listener: () => void): () => void {
    this.slowListeners.push(listener);
    return () => {
      this.slowListeners = this.slowListeners.filter((item) => item !== listener);
    };
  }

  onProbe(listener: (outcome: ProbeOutcome) => void): () => void {
    this.probeListeners.push(listener);
    return () => {
      this.probeListeners = this.probeListeners.filter((item) => item !== listener);
    };
  }

  stateChanged(to: CircuitState, from: CircuitState): void {
    for (const listener of this.stateListeners) listener(to, from);
  }

  slowCall(): void {
    for (const listener of this.slowListeners) listener();
  }

  probe(outcome: ProbeOutcome): void {
    for (const listener of this.probeListeners) listener(outcome);
  }

  /** Drops every listener: the breaker shut down. */
  clear(): void {
    this.stateListeners = [];
    this.slowListeners = [];
    this.probeListeners = [];
  }
}
