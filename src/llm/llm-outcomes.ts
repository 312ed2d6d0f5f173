import { Injectable } from '@nestjs/common';

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

type Listener<T> = (outcome: T) => void;

/**
 * What the LLM route reports as requests and attempts end: collectors in metrics/ subscribe,
 * so the route never imports prom-client. Counts only, never prompts or answers.
 */
@Injectable()
export class LlmOutcomes {
  private requestListeners: Array<Listener<LlmRequestOutcome>> = [];
  private runListeners: Array<Listener<LlmRunOutcome>> = [];
  private attemptListeners: Array<Listener<LlmAttemptOutcome>> = [];
  private firstTokenListeners: Array<Listener<LlmFirstToken>> = [];

  request(outcome: LlmRequestOutcome): void {
    for (const listener of this.requestListeners) listener(outcome);
  }

  run(outcome: LlmRunOutcome): void {
    for (const listener of this.runListeners) listener(outcome);
  }

  attempt(outcome: LlmAttemptOutcome): void {
    for (const listener of this.attemptListeners) listener(outcome);
  }

  firstToken(event: LlmFirstToken): void {
    for (const listener of this.firstTokenListeners) listener(event);
  }

  onFirstToken(listener: Listener<LlmFirstToken>): () => void {
    this.firstTokenListeners.push(listener);
    return () => {
      this.firstTokenListeners = this.firstTokenListeners.filter((item) => item !== listener);
    };
  }

  onRequest(listener: Listener<LlmRequestOutcome>): () => void {
    this.requestListeners.push(listener);
    return () => {
      this.requestListeners = this.requestListeners.filter((item) => item !== listener);
    };
  }

  onRun(listener: Listener<LlmRunOutcome>): () => void {
    this.runListeners.push(listener);
    return () => {
      this.runListeners = this.runListeners.filter((item) => item !== listener);
    };
  }

  onAttempt(listener: Listener<LlmAttemptOutcome>): () => void {
    this.attemptListeners.push(listener);
    return () => {
      this.attemptListeners = this.attemptListeners.filter((item) => item !== listener);
    };
  }
}
