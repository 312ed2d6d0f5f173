/** One attempt as the breaker fires it: its engine gets it whole, so firing it makes no closure. */
export type Attempt = () => Promise<unknown>;

/**
 * How a breaker reads an attempt that rejected, told to its engine as it ends:
 * - `failure`: counted in the window; the engine may open on it;
 * - `answered`: the dependency answered (a 4xx): a success in the window;
 * - `stopped`: neither a success nor a failure (its caller left, or a timeout its caller chose);
 * - `own_failure`: a tenant's own failure while half open: counted nowhere either.
 */
export type RejectionVerdict = 'failure' | 'answered' | 'stopped' | 'own_failure';

/** What a breaker answers its engine, and hears from it; each called synchronously. */
export interface EngineListener {
  /** How `attempt`'s rejection counts ({@link RejectionVerdict}). */
  judge(error: unknown, attempt: Attempt): RejectionVerdict;
  /** A counted failure of `attempt` is in the window; the engine decides whether to open right after. */
  countedFailure(attempt: Attempt): void;
  /** An attempt ended as a success in the window: it resolved, or was `answered`. */
  succeeded(): void;
  /** `attempt`, judged `stopped` or `own_failure`, ended: counted nowhere. */
  uncounted(attempt: Attempt, verdict: 'stopped' | 'own_failure'): void;
  /** The engine opened: on failures past the threshold, or as {@link BreakerEngine.open} asked. */
  opened(): void;
  /** Its open time passed: the breaker decides who probes. */
  halfOpened(): void;
  /** It closed, its window emptied. */
  closed(): void;
}

/**
 * What a breaker needs of the engine that counts failures, opens on them and half-opens after
 * its open time: cockatiel's breaker and Polly's circuit behaviour decide the same things. The
 * breaker owns every other decision (who is refused, who probes, when to close, slowness,
 * tenants) and its state; the engine runs whatever the breaker lets through.
 */
export interface BreakerEngine {
  /** Runs `attempt` (the breaker admitted it) and watches how it ends. */
  fire(attempt: Attempt): Promise<unknown>;
  /** Opens now (no-op when open); it half-opens after the open time. */
  open(): void;
  /** Closes now with an empty window (no-op when closed). */
  close(): void;
  /** How long the next opening lasts, in milliseconds. */
  setOpenTime(ms: number): void;
  /** Clears its timers; it is not used after. */
  shutdown(): void;
}
