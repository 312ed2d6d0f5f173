/**
 * How one attempt of a tenant ended, as far as its own share goes; `slow` marks an attempt whose
 * outcome was recorded already as slow besides.
 */
export type TenantOutcome = 'failed' | 'succeeded' | 'answered' | 'slow';

/** What one tenant's attempts in a breaker's window came to. */
export interface TenantTotals {
  /** Counted failures. */
  failures: number;
  /** Real successes: the action resolved. */
  successes: number;
  /**
   * Errors that do not count (a 4xx...): in the shared window as successes, since the dependency
   * answered, but not successes of the tenant's.
   */
  answered: number;
  /** Slow attempts, whatever their outcome (each is among the three counts above too). */
  slow: number;
}

/** One tenant's outcomes in a breaker's window, bucket by bucket, on the window's serials. */
export class TenantOutcomes {
  private readonly serials: number[];
  private readonly failuresIn: number[];
  private readonly successesIn: number[];
  private readonly answeredIn: number[];
  private readonly slowIn: number[];

  constructor(private readonly buckets: number) {
    this.serials = new Array<number>(buckets).fill(-buckets);
    this.failuresIn = new Array<number>(buckets).fill(0);
    this.successesIn = new Array<number>(buckets).fill(0);
    this.answeredIn = new Array<number>(buckets).fill(0);
    this.slowIn = new Array<number>(buckets).fill(0);
  }

  record(serial: number, outcome: TenantOutcome): void {
    const slot = serial % this.buckets;
    if (this.serials[slot] !== serial) {
      this.serials[slot] = serial;
      this.failuresIn[slot] = 0;
      this.successesIn[slot] = 0;
      this.answeredIn[slot] = 0;
      this.slowIn[slot] = 0;
    }
    if (outcome === 'failed') this.failuresIn[slot]++;
    else if (outcome === 'succeeded') this.successesIn[slot]++;
    else if (outcome === 'answered') this.answeredIn[slot]++;
    else this.slowIn[slot]++;
  }

  /** Calls `each` with every bucket still in the window: its age (0: now) and its counts. */
  forEach(
    serial: number,
    each: (age: number, failures: number, successes: number, answered: number, slow: number) => void,
  ): void {
    for (let slot = 0; slot < this.buckets; slot++) {
      const age = serial - this.serials[slot];
      if (age >= 0 && age < this.buckets)
        each(age, this.failuresIn[slot], this.successesIn[slot], this.answeredIn[slot], this.slowIn[slot]);
    }
  }

  /** Its 4xx answers still in the window: on every counted failure, so no object and no closure. */
  answered(serial: number): number {
    let answered = 0;
    for (let slot = 0; slot < this.buckets; slot++) {
      const age = serial - this.serials[slot];
      if (age >= 0 && age < this.buckets) answered += this.answeredIn[slot];
    }
    return answered;
  }

  totals(serial: number): TenantTotals {
    const totals = { failures: 0, successes: 0, answered: 0, slow: 0 };
    this.forEach(serial, (_age, failed, succeeded, answered, slow) => {
      totals.failures += failed;
      totals.successes += succeeded;
      totals.answered += answered;
      totals.slow += slow;
    });
    return totals;
  }
}
