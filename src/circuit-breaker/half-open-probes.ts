/** How one probe (or any attempt ending while half open) came out, for metrics. */
export type ProbeOutcome = 'succeeded' | 'failed' | 'slow' | 'stopped';

/**
 * The probes of one half-open period: up to `slots` attempts let through, the circuit closing
 * once that many succeeded. A probe stopped (its caller left) gives its slot back. Failures need
 * no bookkeeping here: the first one opens the circuit again, which starts a new period.
 */
export class HalfOpenProbes {
  /** Probes let through this period and not stopped: their identity, for {@link stopped}. */
  private readonly taken = new Set<object>();
  private succeeded = 0;

  constructor(readonly slots: number) {}

  /** The circuit changed state: a new period starts with every slot free. */
  reset(): void {
    this.taken.clear();
    this.succeeded = 0;
  }

  /** A slot is free: the next call let through is a probe. */
  get free(): boolean {
    return this.taken.size < this.slots;
  }

  /** `attempt` goes through as a probe; true while another may still go through. */
  take(attempt: object): boolean {
    this.taken.add(attempt);
    return this.taken.size < this.slots;
  }

  /** `attempt` was stopped; true when it was a probe, whose slot is free again. */
  stopped(attempt: object): boolean {
    return this.taken.delete(attempt);
  }

  /** An attempt succeeded while half open; true once enough did to close. */
  success(): boolean {
    this.succeeded++;
    return this.succeeded >= this.slots;
  }
}
