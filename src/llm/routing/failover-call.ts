import type { LazyAbortController, ResilienceError } from '../../common';
import type { HttpPool } from '../../containment';
import type { ChatCompletion, ChatRequest, PassThroughRequest } from '../chat.types';
import type { LlmRoute, LlmTarget } from './llm-route';
import type { CommittedStream } from './provider-attempt';
import type { RequestAccount } from './request-account';
import type { ChoiceReason } from './target-strategy';
import type { SkipReason } from './target-walk';

/** What a request needs for its attempts. */
export interface FailoverCall {
  route: LlmRoute;
  /** The client's request with the output cap set; each target gets it with its own model. */
  request: ChatRequest;
  /** The request as it came in another wire format, for the targets that speak it. */
  passThrough?: PassThroughRequest;
  pool: HttpPool;
  /** The call's cancellation: its client leaving, shutdown. */
  abort: LazyAbortController;
  account: RequestAccount;
  progress: FailoverProgress;
  /** The caller, so that breakers tell its own failures from the dependency's. */
  tenant?: string;
  /**
   * Streamed requests: sends the winning stream to the client from its commit point on, and
   * resolves once it was sent whole (or fails with why it was not). Absent: one completion.
   */
  deliver?: (committed: CommittedStream, target: LlmTarget) => Promise<void>;
}

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
export interface Served {
  /** The answer; for a stream, what it added up to. */
  completion: ChatCompletion;
  target: LlmTarget;
  /** The answer came from a hedge. */
  hedged: boolean;
}

/** How one attempt (with its hedges) ended. */
export type RaceResult =
  | { ok: true; served: Served }
  | {
      ok: false;
      /** The first attempt's failure, which decides what the loop does next. */
      error: ResilienceError;
    };
