import type { Clock, LazyAbortController, ResilienceError } from '../../common';
import type { HttpPool } from '../../containment';
import type { ChatCompletion, ChatRequest, ChatUsage, PassThroughRequest } from '../chat.types';
import type { LlmRoute, LlmTarget } from './llm-route';
import type { AttemptTiming, CommittedStream, StartedProviderAttempt } from './provider-attempt';
import type { RequestAccount } from './request-account';
import type { ChoiceReason } from './target-strategy';
import type { SkipReason } from './target-walk';

/** What every run of a route needs for its attempts, whatever it asks its targets for. */
interface RouteRunCall {
  route: LlmRoute;
  pool: HttpPool;
  /** The call's cancellation: its client leaving, shutdown. */
  abort: LazyAbortController;
  account: RequestAccount;
  progress: FailoverProgress;
  /** The caller, so that breakers tell its own failures from the dependency's. */
  tenant?: string;
}

/** What a chat request needs for its attempts. */
export interface FailoverCall extends RouteRunCall {
  /** The client's request with the output cap set; each target gets it with its own model. */
  request: ChatRequest;
  /** The request as it came in another wire format, for the targets that speak it. */
  passThrough?: PassThroughRequest;
  /**
   * Streamed requests: sends the winning stream to the client from its commit point on, and
   * resolves once it was sent whole (or fails with why it was not). Absent: one completion.
   */
  deliver?: (committed: CommittedStream, target: LlmTarget) => Promise<void>;
}

/**
 * How a run that asks its targets for another answer than a chat completion (embeddings) makes
 * an attempt and reads what it used: the loop, its breakers, holds and hedges stay the chat's.
 */
export interface AnswerAsk<A> {
  /** Starts one attempt at `target` (through `startAttempt`, for its deadline and abort). */
  start(clock: Clock, target: LlmTarget, timing: AttemptTiming): StartedProviderAttempt<A>;
  /** What the attempt is charged for, in the chat's usage (a count it does not have: 0). */
  usageOf(answer: A): ChatUsage;
  /** The answer with the usage it was charged (its client sees what its tenant paid). */
  withUsage(answer: A, billed: ChatUsage): A;
}

/** A run whose attempts {@link AnswerAsk} makes: never streamed. */
export interface AskingCall<A> extends RouteRunCall {
  ask: AnswerAsk<A>;
  deliver?: undefined;
}

/** What the failover loop runs: a chat request's attempts, or another answer's ({@link AskingCall}). */
export type RouteRun<A = ChatCompletion> = FailoverCall | AskingCall<A>;

/** What the loop did, for the answer, the metrics and the ledger, whether it served or not. */
export interface FailoverProgress {
  /** Attempts made, across every target, hedges included. */
  attempts: number;
  /** Times it moved on to the next target. */
  failovers: number;
  /** Each attempt's target and outcome (`ok`, an error kind, or `hedge_lost`), in order of ending. */
  readonly tried: Array<{ target: LlmTarget; outcome: string }>;
  /** Each hedge started: `won` when its answer was used, `lost` otherwise. */
  readonly hedges: Array<'won' | 'lost'>;
  /** Each target the walk chose (a hedge's: `hedge`), and why; each it passed over for the request's context (`context_window`). */
  readonly choices: Array<{ target: LlmTarget; reason: ChoiceReason | SkipReason }>;
}

/** Who served a request, and how. */
export interface Served<A = ChatCompletion> {
  /** The answer (a chat completion, or what an {@link AnswerAsk} asked for); for a stream, what it added up to. */
  completion: A;
  target: LlmTarget;
  /** The answer came from a hedge. */
  hedged: boolean;
}

/** How one attempt (with its hedges) ended. */
export type RaceResult<A = ChatCompletion> =
  | { ok: true; served: Served<A> }
  | {
      ok: false;
      /** The first attempt's failure, which decides what the loop does next. */
      error: ResilienceError;
    };
