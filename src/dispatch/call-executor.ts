import { Inject, Injectable } from '@nestjs/common';
import {
  asResilienceError,
  type Awaitable,
  CLOCK,
  type Clock,
  isPromiseLike,
  RANDOM,
  type Random,
  type ResilienceError,
  sleep,
  stopReason,
} from '../common';
import type { FireOptions } from '../circuit-breaker';
import { CallOutcomes } from '../events';
import { type AttemptCall, AttemptRunner } from './attempt-runner';
import { ToolRetryContext } from './tool-retry-context';
import type { ToolArguments, ToolDefinition } from './tool';

/** Where a call's answer goes: its result, or the error of its last attempt (a ResilienceError carrying `attempts`). */
export interface CallAnswer {
  resolve(value: unknown): void;
  reject(reason: unknown): void;
}

/** Filled in as the call goes, so whoever answers knows how many attempts were made. */
export interface ExecutionProgress {
  attempts: number;
}

/**
 * The money of a call's attempts: one attempt's cost is held at a time, from just before the
 * attempt starts until it ends. The first attempt's was held before the call was admitted (a
 * call whose first attempt cannot be paid for is refused `budget_exceeded` before it runs).
 */
export interface AttemptBudget {
  /** Holds the next attempt's cost; false when it cannot be held (then the attempt is not made). */
  holdNext(): Awaitable<boolean>;
  /**
   * Ends the attempt held: charged when it `ran` (reached the tool), by what its `failure` says
   * an attempt costs; released when it did not run. Never throws or rejects.
   */
  settle(ran: boolean, failure?: ResilienceError): Promise<void> | undefined;
}

const SETTLED: Promise<void> = Promise.resolve();
const SHORTENED: FireOptions = Object.freeze({ timeoutShortened: true });

/**
 * Steps 8 and 9 of the pipeline: every attempt through the tool's circuit breaker, with its
 * own timeout, and retries by the tool's policy and budget. It runs inside a lane slot, which
 * stays held across the attempts and backoffs; one handler runs at a time, so a retry after a
 * timeout waits until the timed-out handler has really stopped. With an {@link AttemptBudget},
 * each attempt's money is held as it starts and settled as it ends, never across a backoff; a
 * retry whose money cannot be held is not made, and the call ends with its last failure.
 */
@Injectable()
export class CallExecutor {
  constructor(
    private readonly attempts: AttemptRunner,
    private readonly outcomes: CallOutcomes,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RANDOM) private readonly random: Random,
  ) {}

  /**
   * Runs the call's attempts and tells `answer` as soon as the call's outcome is known; the
   * last attempt's money is settled right after (never rejects; the store's own order puts it
   * before any budget read this replica serves later). The promise
   * resolves once no handler of the call runs any more (then its lane slot may go); it never
   * rejects. `budget`, when the call costs money, holds the first attempt already.
   */
  async run(
    tool: ToolDefinition,
    args: ToolArguments,
    call: AttemptCall,
    timeoutMs: number,
    progress: ExecutionProgress,
    answer: CallAnswer,
    budget?: AttemptBudget,
  ): Promise<void> {
    const deadlineAt = this.clock.now() + tool.retry.deadlineMs;
    // The caller asked for less than the tool's own timeout (X-Timeout-Ms): its timeouts are its own.
    const fireOptions = timeoutMs < tool.timeoutMs ? SHORTENED : undefined;
    tool.retryBudget.recordCall();
    let retry: ToolRetryContext | undefined;
    for (;;) {
      let handlerSettled = SETTLED;
      let failure: ResilienceError;
      const attemptsBefore = progress.attempts;
      try {
        const result = await tool.breaker.fire(
          () => {
            progress.attempts++;
            const attempt = this.attempts.start(tool, args, call, timeoutMs, progress.attempts);
            handlerSettled = attempt.settled;
            return attempt.outcome;
          },
          call.tenant,
          fireOptions,
        );
        // Settled before the answer, as an LLM attempt is charged before its answer: a budget
        // read after the answer sees the call's money, whatever store and connection it reads
        // through (on Redis, one round trip more for the caller).
        const settling = budget?.settle(true);
        if (settling) await settling;
        answer.resolve(result);
        return await handlerSettled;
      } catch (error) {
        failure = asResilienceError(error);
      }
      // An open circuit refuses without calling the attempt: it ran nothing and costs nothing.
      const ran = progress.attempts > attemptsBefore;
      let waitMs: number | ResilienceError | undefined;
      if (!call.abort.aborted) {
        retry ??= new ToolRetryContext(tool, call.tenant, deadlineAt, timeoutMs, this.clock, this.random);
        retry.attempts = progress.attempts;
        waitMs = tool.retry.decide(failure, retry);
      }
      if (typeof waitMs !== 'number') {
        const settlingLast = budget?.settle(ran, failure);
        if (settlingLast) await settlingLast;
        answer.reject((waitMs ?? failure).withAttempts(progress.attempts));
        return await handlerSettled;
      }
      // Settled before the backoff: nothing is held while the call waits to retry.
      const settling = budget?.settle(ran, failure);
      if (settling) await settling;
      try {
        await sleep(this.clock, waitMs, call.abort.signal);
      } catch (reason) {
        answer.reject(stopReason(reason).withAttempts(progress.attempts));
        return await handlerSettled;
      }
      const latestStart = deadlineAt - timeoutMs - this.clock.now();
      const ready = await this.settlesWithin(handlerSettled, latestStart, call);
      if (ready !== true) {
        answer.reject((ready === 'aborted' ? stopReason(call.abort.reason) : failure).withAttempts(progress.attempts));
        return await handlerSettled;
      }
      if (budget && !(await this.holdRetry(budget, call))) {
        const stopped = call.abort.aborted ? stopReason(call.abort.reason) : failure;
        answer.reject(stopped.withAttempts(progress.attempts));
        return await handlerSettled;
      }
      this.outcomes.retry(tool.id);
    }
  }

  /**
   * Holds the money of the retry about to start; false when the budget refuses it (or its
   * store is down), or when the call was stopped while the store answered (the hold is then
   * released: the retry will not start).
   */
  private async holdRetry(budget: AttemptBudget, call: AttemptCall): Promise<boolean> {
    const holding = budget.holdNext();
    const held = isPromiseLike(holding) ? await holding : holding;
    if (!held || !call.abort.aborted) return held;
    const releasing = budget.settle(false);
    if (releasing) await releasing;
    return false;
  }

  /**
   * Whether `settled` resolves within `ms` of the clock (at once when it already has), or
   * `'aborted'` as soon as the call is: a caller who left is answered without waiting.
   */
  private settlesWithin(settled: Promise<void>, ms: number, call: AttemptCall): Promise<boolean | 'aborted'> {
    if (call.abort.aborted) return Promise.resolve('aborted');
    if (settled === SETTLED) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ready: boolean | 'aborted') => {
        this.clock.clearTimer(timer);
        detach();
        resolve(ready);
      };
      const timer = this.clock.setTimer(() => done(false), Math.max(0, ms));
      const detach = call.abort.onAbort(() => done('aborted'));
      void settled.then(() => done(true));
    });
  }
}
