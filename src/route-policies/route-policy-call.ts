import { type CallHandler, HttpException } from '@nestjs/common';
import { Observable, type Observer, type Subscriber } from 'rxjs';
import type { Lane, LaneCall, LaneWork, PriorityClass } from '../bulkhead';
import type { Breaker } from '../circuit-breaker';
import { ANONYMOUS_TENANT, asResilienceError } from '../common';
import { type CallState, fromHttpException } from '../common/nest';
import type { CallOutcomes } from '../events';

/** What a route's policies are, worked out once per route. */
export interface RoutePlan {
  lane: Lane | undefined;
  /** The lane's name for the ledger, `''` without one. */
  laneName: string;
  queueTtlMs: number | undefined;
  /** The class of its calls in the lane when the caller asks for none. */
  priority: PriorityClass;
  breaker: Breaker | undefined;
  /** `Controller.method`: the ledger's `toolId` for a company route. */
  label: string;
}

/**
 * One call of a route under `@Bulkhead` / `@CircuitBreaker`, from admission to its answer: the
 * lane's work and its call, the breaker's attempt, the ledger line, and the Observable Nest
 * subscribes to. One object per call instead of a closure for each step, a lane promise and
 * the promise turned back into an Observable: the lane tells it directly how the handler
 * settled, and it answers its subscriber from there.
 */
export class RoutePolicyCall implements LaneWork, LaneCall, Observer<unknown> {
  readonly tenant: string;
  readonly abort: CallState['abort'];
  readonly queueTtlMs: number | undefined;
  /** Its class in the lane: the caller's (within its ceiling), or the route's. */
  readonly priority: PriorityClass;
  /** What Nest subscribes to: the handler's value, or the failure as the client will see it. */
  readonly answer: Observable<unknown>;
  /** The handler ran (the lane gave it a slot and the breaker let it through). */
  private started = false;
  private settled: 'ok' | 'failed' | undefined;
  private result: unknown;
  private subscriber: Subscriber<unknown> | undefined;
  /** Subscribers beyond the first, before the answer; Nest subscribes once. */
  private moreSubscribers: Array<Subscriber<unknown>> | undefined;
  /** The handler's last value, and how the attempt hears it ended (lastValueFrom, without its closures). */
  private handlerValue: unknown = undefined;
  private resolveHandler!: (value: unknown) => void;
  private rejectHandler!: (error: unknown) => void;

  constructor(
    private readonly plan: RoutePlan,
    private readonly state: CallState,
    private readonly handler: CallHandler,
    private readonly outcomes: CallOutcomes,
    /** `clock.now()` when the call arrived. */
    private readonly startedAt: number,
    priority: PriorityClass,
  ) {
    this.tenant = state.tenant ?? ANONYMOUS_TENANT;
    this.abort = state.abort;
    this.queueTtlMs = plan.queueTtlMs;
    this.priority = priority;
    this.answer = new Observable((subscriber) => this.subscribe(subscriber));
  }

  /** Takes the lane slot: runs the handler, under the breaker if the route has one. */
  start(): Promise<unknown> {
    const { breaker } = this.plan;
    // The breaker keys the attempt's tenant by the attempt itself: one function per call.
    return breaker ? breaker.fire(() => this.handle(), this.state.tenant) : this.handle();
  }

  done(outcome: unknown, succeeded: boolean): void {
    if (succeeded) this.succeed(outcome);
    else this.fail(outcome);
  }

  refuse(reason: unknown): void {
    this.fail(reason);
  }

  /** Runs without a lane: the breaker's attempt settles the call. */
  startWithoutLane(): void {
    this.start().then(
      (value) => this.succeed(value),
      (error: unknown) => this.fail(error),
    );
  }

  /** Records a call refused before its handler could run (an open circuit, a full lane). */
  reportRefusal(error: unknown): void {
    this.report(error);
  }

  /** The handler's Observable as the promise the breaker and the lane hold: its last value, or `undefined`. */
  private handle(): Promise<unknown> {
    this.started = true;
    const handled = new Promise((resolve, reject) => {
      this.resolveHandler = resolve;
      this.rejectHandler = reject;
    });
    this.handler.handle().subscribe(this);
    return handled;
  }

  /** @internal The handler's Observable emitted. */
  next(value: unknown): void {
    this.handlerValue = value;
  }

  /** @internal The handler's Observable failed. */
  error(error: unknown): void {
    this.rejectHandler(error);
  }

  /** @internal The handler's Observable completed. */
  complete(): void {
    this.resolveHandler(this.handlerValue);
  }

  private succeed(value: unknown): void {
    try {
      this.report(undefined);
    } catch (error) {
      // The lane calls this as the slot frees: a failure to record answers the client, not the lane.
      this.settle('failed', error);
      return;
    }
    this.settle('ok', value);
  }

  private fail(error: unknown): void {
    const failure = withAttempts(error, this.started ? 1 : 0);
    try {
      this.report(failure);
    } catch (reportError) {
      this.settle('failed', reportError);
      return;
    }
    this.settle('failed', failure);
  }

  private report(error: unknown): void {
    const { state } = this;
    this.outcomes.finish({
      callId: state.callId!,
      toolId: this.plan.label,
      lane: this.plan.laneName,
      tenant: this.tenant,
      pool: state.pool,
      abort: state.abort,
      startedAt: this.startedAt,
      started: this.started,
      attempts: this.started ? 1 : 0,
      error,
    });
  }

  private settle(how: 'ok' | 'failed', result: unknown): void {
    this.settled = how;
    this.result = result;
    const { subscriber, moreSubscribers } = this;
    this.subscriber = this.moreSubscribers = undefined;
    if (subscriber) this.deliver(subscriber);
    if (moreSubscribers) for (const other of moreSubscribers) this.deliver(other);
  }

  private subscribe(subscriber: Subscriber<unknown>): void {
    if (this.settled) this.deliver(subscriber);
    else if (!this.subscriber) this.subscriber = subscriber;
    else (this.moreSubscribers ??= []).push(subscriber);
  }

  private deliver(subscriber: Subscriber<unknown>): void {
    if (this.settled === 'failed') {
      subscriber.error(this.result);
      return;
    }
    subscriber.next(this.result);
    subscriber.complete();
  }
}

/** The failure as the client will see it, with the attempts the route made (1 once its handler ran). */
function withAttempts(error: unknown, attempts: number): unknown {
  if (error instanceof HttpException) return fromHttpException(error).withAttempts(attempts);
  return asResilienceError(error).withAttempts(attempts);
}
