import type { LaneCall, LaneWork, PriorityClass } from '../bulkhead';
import type { Clock, LazyAbortController, Random } from '../common';
import type { HttpPool } from '../containment';
import type { ChatCall } from './chat-call';
import type { ChatRequest, PassThroughRequest } from './chat.types';
import { type FailoverCall, type FailoverProgress, type Served, serveWithFailover } from './routing/failover';
import type { LlmRoute } from './routing/llm-route';
import type { RequestAccount } from './routing/request-account';

/**
 * One provider run as its lane and its failover loop see it: one object that is the lane's call
 * (tenant, abort), the loop's call (route, request, pool, account, ...), starts the loop when the
 * run takes a slot, and holds its answer (what the loop served, or the lane's refusal). One
 * object instead of a closure, a call record and the lane's promise per request.
 *
 * The slot is held until the loop settles, that is until every request it made has stopped;
 * the answer settles then too, as `Lane.run`'s did, and an adaptive lane reads the loop's
 * outcome as it reads any task's (no `limitSignal` of its own).
 */
export class LlmRunWork implements LaneWork, LaneCall, FailoverCall {
  readonly answer: Promise<Served>;
  readonly tenant: string;
  readonly passThrough: PassThroughRequest | undefined;
  /** Its class in the lane: the caller's within its ceiling, or the route's. */
  readonly priority: PriorityClass;
  private resolveAnswer!: (value: Served) => void;
  private rejectAnswer!: (reason: unknown) => void;

  constructor(
    private readonly clock: Clock,
    private readonly random: Random,
    call: ChatCall,
    readonly route: LlmRoute,
    /** The client's request held to the route's output cap. */
    readonly request: ChatRequest,
    readonly pool: HttpPool,
    /** Stops the run: its client's, or a joined run's (once all its clients left), or a keyed run's own. */
    readonly abort: LazyAbortController,
    readonly account: RequestAccount,
    readonly progress: FailoverProgress,
    readonly deliver: FailoverCall['deliver'],
    priority: PriorityClass,
  ) {
    this.priority = priority;
    this.tenant = call.tenant;
    this.passThrough = call.passThrough;
    this.answer = new Promise((resolve, reject) => {
      this.resolveAnswer = resolve;
      this.rejectAnswer = reject;
    });
  }

  start(): Promise<Served> {
    return serveWithFailover(this.clock, this.random, this);
  }

  done(outcome: unknown, succeeded: boolean): void {
    if (succeeded) this.resolveAnswer(outcome as Served);
    else this.rejectAnswer(outcome);
  }

  /** Expired or cancelled while waiting (the loop never starts), or stopped at shutdown. */
  refuse(reason: unknown): void {
    this.rejectAnswer(reason);
  }
}
