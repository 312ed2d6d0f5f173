import { Injectable } from '@nestjs/common';

/** How one LLM request ended, for metrics. */
export interface LlmRequestOutcome {
  route: string;
  /** `provider/model` that served, or the last one tried; '' when none was (a cache hit, a refusal). */
  target: string;
  /** `ok`, or the error kind the client got. */
  outcome: string;
  cache: 'hit' | 'semantic' | 'miss' | 'bypass';
  failovers: number;
  /** Each hedge the request started, and how it ended. */
  hedges: ReadonlyArray<'won' | 'lost'>;
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
  private attemptListeners: Array<Listener<LlmAttemptOutcome>> = [];
  private firstTokenListeners: Array<Listener<LlmFirstToken>> = [];

  request(outcome: LlmRequestOutcome): void {
    for (const listener of this.requestListeners) listener(outcome);
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

  onAttempt(listener: Listener<LlmAttemptOutcome>): () => void {
    this.attemptListeners.push(listener);
    return () => {
      this.attemptListeners = this.attemptListeners.filter((item) => item !== listener);
    };
  }
}
