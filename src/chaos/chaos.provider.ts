import { type Audience, type Clock, rejectOnAbort, sleep } from '../common';
import type { LlmTargetChaosConfig } from '../llm';
// carriesContent: the route's own test of content, so the cut falls just past the commit point it uses.
import {
  carriesContent,
  type ChatChunk,
  type ChatCompletion,
  type LlmProvider,
  type ProviderAttempt,
  type ProviderErrorAnswer,
  ProviderFailure,
  providerStatusError,
  streamCutError,
} from '../llm';
import type { ChaosDecider } from './chaos-decider';
import { type ChaosReport, LATENCY } from './chaos-injection';

/** The faults an LLM target's attempt can be given (`chaos.faultKind` of a target). */
export type LlmFaultKind = NonNullable<LlmTargetChaosConfig['faultKind']>;

/** The Retry-After of a `rate_limited` fault when its settings give none. */
export const DEFAULT_CHAOS_RETRY_AFTER_MS = 1_000;

/** Where a wrapped target is: what its injections are reported with. */
export interface ChaosTarget {
  /** `llm.<route>/<provider>/<model>`. */
  readonly name: string;
  /** Its route's lane. */
  readonly lane: string;
  /** `rate_limited`: the Retry-After its 429 carries. */
  readonly retryAfterMs?: number;
  /** Who may use its route, so who may see what is injected into it. */
  readonly audience?: Audience;
}

/**
 * An LLM target's provider with chaos in front of it. A fault is the provider's own failure as
 * `provider-errors.ts` reads it off the wire, so the route retries, fails over, charges its
 * breaker and keeps hedges off the target exactly as it would for the real one:
 *
 * - latency waits on the clock before the request is sent, within the attempt's timeout;
 * - `overloaded` (503), `rate_limited` (429 with its Retry-After), `server_error` (500) fail
 *   without sending anything;
 * - `timeout` sends nothing and never answers: the attempt's own timer fails it;
 * - `stream_cut` lets a streamed answer through to its first content, then stops it as a dropped
 *   connection would (past the commit point: the client sees the cut). A completion that is not
 *   streamed has no stream to cut and is left alone.
 */
export class ChaosProvider implements LlmProvider {
  /**
   * The inner provider's own count, where it has one, without chaos: a count is advice that
   * falls back to the estimate, and faults are for the answers the route serves.
   */
  readonly countTokens?: (attempt: ProviderAttempt) => Promise<number>;

  constructor(
    private readonly inner: LlmProvider,
    private readonly target: ChaosTarget,
    private readonly decider: ChaosDecider<LlmFaultKind>,
    private readonly clock: Clock,
    private readonly report: ChaosReport,
  ) {
    if (inner.countTokens) this.countTokens = (attempt) => inner.countTokens!(attempt);
  }

  get name(): string {
    return this.inner.name;
  }

  async complete(attempt: ProviderAttempt): Promise<ChatCompletion> {
    await this.before(attempt, false);
    return this.inner.complete(attempt);
  }

  async *stream(attempt: ProviderAttempt): AsyncGenerator<ChatChunk> {
    const cut = await this.before(attempt, true);
    if (!cut) {
      yield* this.inner.stream(attempt);
      return;
    }
    // Leaving the loop by the throw ends the provider's stream (its request is cancelled).
    for await (const chunk of this.inner.stream(attempt)) {
      yield chunk;
      if (carriesContent(chunk)) {
        this.injection('stream_cut');
        throw injected(streamCutError(attempt.target));
      }
    }
  }

  /**
   * The attempt's latency, then its fault (thrown); true when its stream is to be cut, which
   * only a streamed attempt can be.
   */
  private async before(attempt: ProviderAttempt, streamed: boolean): Promise<boolean> {
    const { latencyMs, fault } = this.decider.decide();
    if (latencyMs > 0) {
      this.injection(LATENCY);
      await sleep(this.clock, latencyMs, attempt.signal);
    }
    if (fault === undefined || (fault === 'stream_cut' && !streamed)) return false;
    if (fault === 'stream_cut') return true;
    this.injection(fault);
    if (fault === 'timeout') return rejectOnAbort(attempt.signal);
    throw injected(providerStatusError(attempt.target, this.answerOf(fault), this.clock.wallNow()));
  }

  /** The provider's answer a fault stands for, as it would come off the wire. */
  private answerOf(fault: 'overloaded' | 'rate_limited' | 'server_error'): ProviderErrorAnswer {
    switch (fault) {
      case 'overloaded':
        return { status: 503, headers: {}, body: { error: { type: 'overloaded_error' } } };
      case 'rate_limited': {
        const retryAfterMs = this.target.retryAfterMs ?? DEFAULT_CHAOS_RETRY_AFTER_MS;
        return {
          status: 429,
          headers: { 'retry-after-ms': String(retryAfterMs) },
          body: { error: { type: 'rate_limit_error' } },
        };
      }
      case 'server_error':
        return { status: 500, headers: {}, body: { error: { type: 'server_error' } } };
    }
  }

  private injection(kind: string): void {
    this.report({ target: this.target.name, kind, lane: this.target.lane, audience: this.target.audience });
  }
}

/** The same failure, saying it was injected. */
function injected(failure: ProviderFailure): ProviderFailure {
  return new ProviderFailure(failure.kind, failure.code, `${failure.message} (injected by chaos)`, {
    retryAfterMs: failure.retryAfterMs,
    upstreamStatus: failure.upstreamStatus,
  });
}
