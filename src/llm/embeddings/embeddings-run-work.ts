import type { LaneCall, LaneWork, PriorityClass } from '../../bulkhead';
import type { Clock, LazyAbortController, Random } from '../../common';
import type { HttpPool } from '../../containment';
import { type AskingCall, type FailoverProgress, type Served, serveWithFailover } from '../routing/failover';
import type { LlmRoute } from '../routing/llm-route';
import type { RequestAccount } from '../routing/request-account';
import type { EmbeddingsAnswer, EmbeddingsRequest } from '../wire';
import { EmbeddingsAsk } from './embeddings-ask';

/**
 * One provider run of an embeddings request as its lane and the route's failover loop see it,
 * as LlmRunWork is a chat request's: the lane's work and call, and the loop's call, whose
 * attempts {@link EmbeddingsAsk} makes. The loop is the chat's: breakers, retries, failover,
 * hedges, each attempt's hold.
 */
export class EmbeddingsRunWork implements LaneWork, LaneCall, AskingCall<EmbeddingsAnswer> {
  readonly answer: Promise<Served<EmbeddingsAnswer>>;
  readonly ask: EmbeddingsAsk;
  private resolveAnswer!: (value: Served<EmbeddingsAnswer>) => void;
  private rejectAnswer!: (reason: unknown) => void;

  constructor(
    private readonly clock: Clock,
    private readonly random: Random,
    readonly tenant: string,
    readonly route: LlmRoute,
    request: EmbeddingsRequest,
    readonly pool: HttpPool,
    /** Stops the run: its client's, or a keyed run's own. */
    readonly abort: LazyAbortController,
    readonly account: RequestAccount,
    readonly progress: FailoverProgress,
    /** Its class in the lane: the caller's within its ceiling, or the route's. */
    readonly priority: PriorityClass,
  ) {
    this.ask = new EmbeddingsAsk(request);
    this.answer = new Promise((resolve, reject) => {
      this.resolveAnswer = resolve;
      this.rejectAnswer = reject;
    });
  }

  start(): Promise<Served<EmbeddingsAnswer>> {
    return serveWithFailover(this.clock, this.random, this);
  }

  done(outcome: unknown, succeeded: boolean): void {
    if (succeeded) this.resolveAnswer(outcome as Served<EmbeddingsAnswer>);
    else this.rejectAnswer(outcome);
  }

  /** Expired or cancelled while waiting (the loop never starts), or stopped at shutdown. */
  refuse(reason: unknown): void {
    this.rejectAnswer(reason);
  }
}
