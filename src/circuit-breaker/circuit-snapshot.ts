import type { CircuitState } from './breaker-events';

/** What `GET /v1/circuits` shows of one breaker; counts are of the rolling window. */
export interface CircuitSnapshot {
  state: CircuitState;
  failures: number;
  successes: number;
  /**
   * Tenants refused on their own (their calls failed while others' succeeded), with the time
   * left until each may probe; at most {@link SNAPSHOT_TENANTS} of them.
   */
  tenantsOpen: Array<{ tenant: string; retryAfterMs: number }>;
  /** Slow attempts in the window (of failures and successes): only with `slowCallDurationMs` set. */
  slowCalls?: number;
  /** How long it stays open when it opens next, or stays open now: only with `backoffMultiplier` above 1. */
  openTimeMs?: number;
}

/** Tenants a snapshot lists at most. */
export const SNAPSHOT_TENANTS = 50;
