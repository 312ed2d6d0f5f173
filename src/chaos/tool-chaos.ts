import { type Clock, rejectOnAbort, ResilienceError, sleep, upstreamStatusError } from '../common';
import type { ToolChaosConfig } from '../dispatch';
import type { ToolAttemptWrapper, WrappedAttempt } from '../dispatch';
import type { ChaosDecider } from './chaos-decider';
import { type ChaosReport, LATENCY } from './chaos-injection';

/** The faults a tool's attempt can be given (`tools.<id>.chaos.faultKind`). */
export type ToolFaultKind = NonNullable<ToolChaosConfig['faultKind']>;

/**
 * Chaos for the attempts of one tool, put in where the handler would start, so that everything
 * around it (the attempt's timeout, the breaker, retries, the lane slot) meets the failure as it
 * would meet the real one:
 *
 * - latency waits on the clock before the handler starts, and counts towards the attempt's
 *   timeout; the attempt's abort (its timeout, the caller leaving) ends the wait at once;
 * - `transient` fails as an upstream's 503 would, without calling the handler (nothing reaches
 *   the upstream);
 * - `timeout` never answers: the attempt's own timer then fails it with the real `timeout`.
 */
export class ToolChaos implements ToolAttemptWrapper {
  constructor(
    readonly toolId: string,
    private readonly decider: ChaosDecider<ToolFaultKind>,
    private readonly clock: Clock,
    private readonly report: ChaosReport,
  ) {}

  /**
   * Runs one attempt's handler (`run`) under chaos. When the draw injects nothing, `run` is
   * called at once and its answer returned as it is (a value stays a value).
   */
  attempt(run: () => unknown, attempt: WrappedAttempt): unknown {
    const { latencyMs, fault } = this.decider.decide();
    if (latencyMs === 0 && fault === undefined) return run();
    return this.injected(run, attempt, latencyMs, fault);
  }

  private async injected(
    run: () => unknown,
    attempt: WrappedAttempt,
    latencyMs: number,
    fault: ToolFaultKind | undefined,
  ): Promise<unknown> {
    if (latencyMs > 0) {
      this.injection(LATENCY, attempt);
      await sleep(this.clock, latencyMs, attempt.abort.signal);
    }
    switch (fault) {
      case undefined:
        return run();
      case 'transient':
        this.injection(fault, attempt);
        throw chaosUpstreamError(this.toolId);
      case 'timeout':
        this.injection(fault, attempt);
        return rejectOnAbort(attempt.abort);
    }
  }

  private injection(kind: string, attempt: WrappedAttempt): void {
    this.report({ target: this.toolId, kind, callId: attempt.callId, lane: attempt.lane });
  }
}

/** The error of an upstream answering 503, which says it was injected. */
function chaosUpstreamError(toolId: string): ResilienceError {
  const real = upstreamStatusError(toolId, 503, undefined);
  return new ResilienceError(real.kind, `${real.message} (injected by chaos)`, { retryAfterMs: real.retryAfterMs });
}
