import { Injectable } from '@nestjs/common';
import { Listeners } from '../common';

/** How one LLM request ended for its client, for metrics. */
export interface LlmRequestOutcome {
  route: string;
  /** `ok`, or the error kind the client got. */
  outcome: string;
  cache: 'hit' | 'semantic' | 'miss' | 'bypass';
}

/**
 * How one run of a route's targets ended, for metrics: what the providers were asked and
 * answered. One per run, however many clients waited for it (identical requests joined into
 * one) and whether or not they were still there when it ended.
 */
export interface LlmRunOutcome {
  route: string;
  /** `provider/model` that served, or the last one tried; '' when none was. */
  target: string;
  failovers: number;
  /** Each hedge the run started, and how it ended. */
  hedges: ReadonlyArray<'won' | 'lost'>;
  /**
   * Each target the run chose, and why (`position`, `weight`, `least_busy`, `lowest_latency`,
   * `no_latency_sample`, `hedge`); each it passed over because the request's context would not
   * fit (`context_window`).
   */
  choices: ReadonlyArray<{ readonly target: { readonly label: string }; readonly reason: string }>;
  /** The served answer's usage; 0 when none was served. */
  promptTokens: number;
  completionTokens: number;
}

/** One attempt at one target, for metrics. */
export interface LlmAttemptOutcome {
  route: string;
  target: string;
  /** `ok`, or the error kind of the attempt. */
  outcome: string;
}

/** A streamed answer reached its first content (its commit point). */
export interface LlmFirstToken {
  route: string;
  target: string;
  /** Since the request came in: waits, retries, failover and hedges included. */
  seconds: number;
}

/** A count of a provider's usage that was not charged as given (never its value). */
export interface LlmUsageRejected {
  route: string;
  target: string;
  /** The usage field: `prompt_tokens`, `completion_tokens`, `cached_tokens`, `cache_write_tokens`, `cache_write_1h_tokens`. */
  field: string;
  /** `not_a_number`, `not_finite`, `negative`, `not_integer` or `above_bound` (more than the attempt's hold covered). */
  reason: string;
}

/**
 * A `/v1/responses` answer that was to be kept, or a request that named one, and the store of
 * kept responses failed it: `read` (the request failed), `write` (the answer went out unkept),
 * `too_large` (over `maxResponseBytes`: the answer went out unkept).
 */
export interface StoredResponseFailure {
  operation: 'read' | 'write' | 'too_large';
}

/**
 * What the LLM route reports as requests and attempts end: collectors in metrics/ subscribe,
 * so the route never imports prom-client. Counts only, never prompts or answers.
 */
@Injectable()
export class LlmOutcomes {
  private readonly requests = new Listeners<[outcome: LlmRequestOutcome]>();
  private readonly runs = new Listeners<[outcome: LlmRunOutcome]>();
  private readonly attempts = new Listeners<[outcome: LlmAttemptOutcome]>();
  private readonly firstTokens = new Listeners<[event: LlmFirstToken]>();
  private readonly usageRejections = new Listeners<[event: LlmUsageRejected]>();
  private readonly storedResponseFailures = new Listeners<[event: StoredResponseFailure]>();

  request(outcome: LlmRequestOutcome): void {
    this.requests.emit(outcome);
  }

  run(outcome: LlmRunOutcome): void {
    this.runs.emit(outcome);
  }

  attempt(outcome: LlmAttemptOutcome): void {
    this.attempts.emit(outcome);
  }

  firstToken(event: LlmFirstToken): void {
    this.firstTokens.emit(event);
  }

  usageRejected(event: LlmUsageRejected): void {
    this.usageRejections.emit(event);
  }

  storedResponseFailed(event: StoredResponseFailure): void {
    this.storedResponseFailures.emit(event);
  }

  onStoredResponseFailure(listener: (event: StoredResponseFailure) => void): () => void {
    return this.storedResponseFailures.add(listener);
  }

  onUsageRejected(listener: (event: LlmUsageRejected) => void): () => void {
    return this.usageRejections.add(listener);
  }

  onFirstToken(listener: (event: LlmFirstToken) => void): () => void {
    return this.firstTokens.add(listener);
  }

  onRequest(listener: (outcome: LlmRequestOutcome) => void): () => void {
    return this.requests.add(listener);
  }

  onRun(listener: (outcome: LlmRunOutcome) => void): () => void {
    return this.runs.add(listener);
  }

  onAttempt(listener: (outcome: LlmAttemptOutcome) => void): () => void {
    return this.attempts.add(listener);
  }
}
