import { Inject, Injectable, Optional } from '@nestjs/common';
import { BudgetGate, type BudgetReservation, type ReservationRequest, storeFailure } from '../../budget';
import { type Awaitable, isPromiseLike } from '../../common';
import { type HeaderSink, RateLimiter } from '../../rate-limit';
import { ToolCallBudget, type ToolCallBudgetTimes } from '../tool-call-budget';
import type { RedisCallAdmission } from './redis-call-admission';

/** Injection token of the {@link RedisCallAdmission}; null unless both stores are the Redis ones. */
export const JOINT_CALL_ADMISSION = Symbol('JOINT_CALL_ADMISSION');

/** What steps 4 and 5 need to know of a call. */
export interface AdmittedCall {
  tenant: string;
  /** Tokens the call takes from the tokens-per-minute bucket. */
  tokens: number;
  costUsd: number;
  headers?: HeaderSink;
}

/**
 * Steps 4 (rate limit) and 5 (budget) of a tool call, as one decision: the call takes its
 * request and tokens and holds its first attempt's money, or takes and holds nothing. On the
 * Redis stores that is one script, one round trip (RedisCallAdmission); otherwise the rate
 * limit takes, then the budget reserves, and a budget refusal gives the take back (at once,
 * in one synchronous block, on the memory stores). In shadow mode (`rateLimits.enforce: false`)
 * the steps stay apart: the rate limit refuses nothing there, so it has nothing to decide with
 * the budget.
 */
@Injectable()
export class CallAdmission {
  constructor(
    private readonly rateLimiter: RateLimiter,
    private readonly gate: BudgetGate,
    @Optional() @Inject(JOINT_CALL_ADMISSION) private readonly joint: RedisCallAdmission | null = null,
  ) {}

  /**
   * Admits the call (throws or rejects `rate_limited`, `budget_exceeded` or `unavailable`) and
   * answers its budget; undefined when it needs none (no `times`: it costs nothing). At once,
   * without a promise, when both steps decide at once.
   */
  admit(call: AdmittedCall, times: ToolCallBudgetTimes | undefined): Awaitable<ToolCallBudget | undefined> {
    const request = times && this.gate.request(call.tenant, call.costUsd, times.firstHoldMs, times.retryAfterMaxMs);
    if (request && this.joint && this.rateLimiter.enforcing) {
      const take = this.rateLimiter.plan(call.tenant, call.tokens);
      if (take) {
        return this.joint.admit(take.limits.rules, take.amounts, request).then(
          ({ rate, budget }) => {
            this.rateLimiter.apply(call.tenant, take.limits, call.tokens, rate, call.headers);
            return this.budgetOf(call, times!, this.gate.answered(request, budget!));
          },
          (error: unknown) => {
            // One script decided both: a failure is the rate limit's (failMode) and, when that
            // lets calls through, the budget's, which fails closed.
            this.rateLimiter.storeFailed(error);
            throw storeFailure(error);
          },
        );
      }
    }
    const took = this.rateLimiter.admit(call.tenant, call.tokens, call.headers);
    if (!request) return isPromiseLike(took) ? took.then(() => undefined) : undefined;
    if (isPromiseLike(took)) return took.then((taken) => this.hold(call, times!, request, taken));
    return this.hold(call, times!, request, took);
  }

  /** Step 5 after the rate limit took (`taken`) or let the call through. */
  private hold(
    call: AdmittedCall,
    times: ToolCallBudgetTimes,
    request: ReservationRequest,
    taken: boolean,
  ): Awaitable<ToolCallBudget> {
    let held: Awaitable<BudgetReservation>;
    try {
      held = this.gate.reserveRequested(request);
    } catch (error) {
      if (taken) this.rateLimiter.giveBack(call.tenant, call.tokens);
      throw error;
    }
    if (!isPromiseLike(held)) return this.budgetOf(call, times, held);
    return Promise.resolve(held).then(
      (reservation) => this.budgetOf(call, times, reservation),
      async (error: unknown) => {
        if (taken) await this.rateLimiter.giveBack(call.tenant, call.tokens);
        throw error;
      },
    );
  }

  private budgetOf(call: AdmittedCall, times: ToolCallBudgetTimes, first: BudgetReservation): ToolCallBudget {
    return new ToolCallBudget(this.gate, call.tenant, call.costUsd, times, first);
  }
}
