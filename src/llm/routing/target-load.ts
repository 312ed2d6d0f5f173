/** What a latency sample measures: the first content of a stream, or a whole completion. */
export type LatencyKind = 'first_token' | 'answer';

/** Weight of the newest sample in the moving average: about the last five samples count. */
const EWMA_WEIGHT = 0.3;
/**
 * A sample older than this no longer counts: the target is treated as unsampled, so it is tried
 * again. Without it a target that was slow once, or failed, would never be chosen to show it
 * has recovered.
 */
export const LATENCY_STALE_MS = 30_000;

/**
 * One target's load as its route sees it: attempts in flight (started, not yet settled) and an
 * exponentially weighted moving average of its latency for each {@link LatencyKind}, timed on
 * the injected clock. Shared by every request of the route; no allocation per sample.
 */
export class TargetLoad {
  private running = 0;
  private firstTokenMs = 0;
  private firstTokenAt = -Infinity;
  private answerMs = 0;
  private answerAt = -Infinity;

  constructor(
    /**
     * Whether its route's strategy reads it (`least-busy`, `lowest-latency`). Untracked, it
     * records nothing and its attempts are not measured: a route of the other strategies pays
     * nothing for it on each attempt.
     */
    readonly tracked = true,
  ) {}

  /** Attempts started at the target whose provider request has not settled yet. */
  get inFlight(): number {
    return this.running;
  }

  started(): void {
    if (this.tracked) this.running++;
  }

  /** Called once per {@link started}, however the attempt ended (answered, failed, stopped, cut). */
  ended(): void {
    // Never below zero: a stray call would otherwise make the target look idle for ever after.
    if (this.running > 0) this.running--;
  }

  /** Adds one latency sample taken at `now` (clock ms). */
  sample(kind: LatencyKind, latencyMs: number, now: number): void {
    if (!this.tracked) return;
    if (kind === 'first_token') {
      this.firstTokenMs = blend(this.firstTokenMs, latencyMs, this.firstTokenAt, now);
      this.firstTokenAt = now;
    } else {
      this.answerMs = blend(this.answerMs, latencyMs, this.answerAt, now);
      this.answerAt = now;
    }
  }

  /** The average latency of `kind` at `now`, or undefined when it has no sample younger than {@link LATENCY_STALE_MS}. */
  latencyMs(kind: LatencyKind, now: number): number | undefined {
    const at = kind === 'first_token' ? this.firstTokenAt : this.answerAt;
    if (now - at > LATENCY_STALE_MS) return undefined;
    return kind === 'first_token' ? this.firstTokenMs : this.answerMs;
  }
}

function blend(average: number, latencyMs: number, lastAt: number, now: number): number {
  // A stale average is history: the new sample starts it afresh.
  if (now - lastAt > LATENCY_STALE_MS) return latencyMs;
  return average + EWMA_WEIGHT * (latencyMs - average);
}
