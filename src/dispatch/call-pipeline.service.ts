import { Inject, Injectable, Optional } from '@nestjs/common';
import { OverloadGuard } from '../overload';
import { LaneRegistry } from '../bulkhead';
import { admitCall } from '../pipeline';
import {
  asResilienceError,
  CLOCK,
  type Clock,
  isPromiseLike,
  type LazyAbortController,
  leaseLifetimeMs,
  ResilienceError,
} from '../common';
import type { PoolName } from '../containment';
import { CallOutcomes } from '../events';
import { CallAdmission } from './admission';
import { CallExecutor, type ExecutionProgress } from './call-executor';
import { IdempotencyService, scopedIdempotencyKey } from '../idempotency';
import { KeyedToolCall, type KeyedToolProgress } from './keyed-tool-call';
import type { ToolCallBudget, ToolCallBudgetTimes } from './tool-call-budget';
import { ToolCallWork } from './tool-call-work';
import type { ToolCall } from './tool-call';
import { ToolCallAudit } from './tool-call-audit';
import { DISPATCH_MODULE_OPTIONS, type DispatchModuleOptions } from './dispatch.module-definition';

/** The success body of docs/http-contract.md section 4. */
export interface ToolCallSuccess {
  callId: string;
  toolId: string;
  lane: string;
  pool: 'normal' | 'isolated';
  result: unknown;
  attempts: number;
  durationMs: number;
  replayed: boolean;
}

interface CallProgress extends ExecutionProgress, KeyedToolProgress {
  /** The call took a lane slot and its attempts began. */
  started: boolean;
  /** Its outcome is another call's: joined or replayed by idempotency key. */
  replayed: boolean;
  /** The pool that served the call replayed. */
  replayedPool?: PoolName;
}

/**
 * One tool call through the steps of docs/http-contract.md section 5, in order. Each step is a small
 * injectable; a step that refuses the call leaves no trace in the steps after it.
 */
@Injectable()
export class CallPipeline {
  private readonly audit: ToolCallAudit;

  constructor(
    private readonly lanes: LaneRegistry,
    private readonly executor: CallExecutor,
    private readonly idempotency: IdempotencyService,
    private readonly admission: CallAdmission,
    private readonly outcomes: CallOutcomes,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(DISPATCH_MODULE_OPTIONS) options: DispatchModuleOptions,
    // Absent or null when the process's overload guard is off (or its module not imported).
    @Optional() @Inject(OverloadGuard) private readonly overload: OverloadGuard | null = null,
  ) {
    this.audit = new ToolCallAudit(options.audit);
  }

  async invoke(call: ToolCall): Promise<ToolCallSuccess> {
    const { tool } = call;
    const startedAt = this.clock.now();
    const progress: CallProgress = { started: false, replayed: false, attempts: 0 };
    let budget: ToolCallBudget | undefined;
    try {
      // 1. authenticate: the caller resolved the tenant.  2. validate, before the call is admitted anywhere.
      tool.validate(call.arguments);
      // 3. containment: the route guard read the snapshot and chose the pool; a hard posture never got here.
      if (tool.containment === 'deny' && call.contained) {
        throw new ResilienceError('contained', `tool '${tool.id}' is not available to a contained tenant`);
      }
      // 4-5. rate limit and budget, decided as one: the call takes its request and tokens and
      // holds its first attempt's cost, or takes and holds nothing. Each retry holds its own cost.
      const admitting = this.admission.admit(
        { tenant: call.tenant, tokens: tool.tokens, costUsd: tool.costUsd, headers: call.headers },
        tool.costUsd > 0 ? this.budgetTimes(call) : undefined,
      );
      budget = isPromiseLike(admitting) ? await admitting : admitting;
      const result =
        call.idempotencyKey === undefined
          ? await this.admitAndRun(call, call.abort, progress, budget)
          : await this.runOnce(call, call.idempotencyKey, progress, budget);
      const durationMs = this.finish(call, startedAt, progress);
      return {
        callId: call.callId,
        toolId: tool.id,
        lane: tool.lane,
        pool: progress.replayedPool ?? call.pool,
        // `undefined` would drop the field from the JSON body.
        result: result === undefined ? null : result,
        attempts: progress.attempts,
        durationMs,
        replayed: progress.replayed,
      };
    } catch (error) {
      const failure = asResilienceError(error).withAttempts(progress.attempts);
      this.finish(call, startedAt, progress, failure);
      throw failure;
    } finally {
      // 10. settle: once its attempts started, the executor settles each one as it ends; a call
      // refused or replayed before then gives its first attempt's money back untouched.
      if (budget && !progress.started) {
        const releasing = budget.release();
        if (releasing) await releasing;
      }
    }
  }

  /** How long a call's idempotency claim lasts unrenewed: its queue wait and all its attempts. */
  private leaseMs(call: ToolCall): number {
    return leaseLifetimeMs(this.queueTtlMs(call), call.tool.retry.deadlineMs);
  }

  private queueTtlMs(call: ToolCall): number {
    return call.queueTtlMs ?? this.lanes.get(call.tool.lane)!.queueTtlMs;
  }

  /**
   * How long each attempt's money may stay held (the first one from before the lane's queue),
   * should this process die before settling it; and the longest Retry-After of a refusal that
   * only money held by calls in flight causes: one attempt of this tool, after which the calls
   * in flight have ended an attempt or are of slower tools. No renewal: an attempt is answered
   * by its timeout at the latest, and its money is settled right after.
   */
  private budgetTimes(call: ToolCall): ToolCallBudgetTimes {
    return {
      firstHoldMs: leaseLifetimeMs(this.queueTtlMs(call), call.timeoutMs),
      retryHoldMs: leaseLifetimeMs(0, call.timeoutMs),
      retryAfterMaxMs: call.tool.timeoutMs,
    };
  }

  /**
   * 6. idempotency: the call runs at most once per key (IdempotencyService.runOnce); the
   * scoped key, never the caller's own, goes to the upstream.
   */
  private runOnce(
    call: ToolCall,
    key: string,
    progress: CallProgress,
    budget: ToolCallBudget | undefined,
  ): Promise<unknown> {
    const scoped = scopedIdempotencyKey(call.tenant, call.tool.id, key);
    return this.idempotency.runOnce(
      new KeyedToolCall(call, scoped, this.leaseMs(call), progress, budget, (keyed, abort) =>
        this.admitAndRun(keyed, abort, progress, budget),
      ),
    );
  }

  /**
   * 7. lane admission, then 8-9 (breaker, attempts, retries) inside the slot. `abort` stops
   * the work: the caller's own, or a detached one for a keyed call. The answer comes as soon
   * as it is known; the slot is held until no handler of the call runs any more.
   */
  private admitAndRun(
    call: ToolCall,
    abort: LazyAbortController,
    progress: CallProgress,
    budget: ToolCallBudget | undefined,
  ): Promise<unknown> {
    const { tool } = call;
    const lane = this.lanes.get(tool.lane)!;
    // An overloaded process sheds, then an open circuit refuses, before the queue and before the
    // call's work is even made: a refusal allocates nothing but its error. The guard goes first:
    // a half-open breaker may hand this call its probe. The lane admission is admitCall's, alone.
    const shed = this.overload?.refusal(call.priority ?? tool.priority);
    if (shed) return Promise.reject(shed);
    const refusal = tool.breaker.refusal(call.tenant, call.timeoutMs < tool.timeoutMs);
    if (refusal) return Promise.reject(refusal);
    // The work is its own lane call (tenant, abort, queue TTL).
    const work = new ToolCallWork(this.executor, call, abort, progress, budget);
    const rejection = admitCall(undefined, lane, undefined, undefined, work, work);
    if (rejection) return Promise.reject(rejection);
    // Admitted and not started (nor refused for an abort): it waits in the queue.
    if (call.onQueued && !progress.started && !abort.aborted) {
      call.onQueued({
        lane,
        queueTtlMs: this.queueTtlMs(call),
        get started() {
          return progress.started;
        },
      });
    }
    return work.answer;
  }

  /** 10. settle and record; returns the call's duration in milliseconds. */
  private finish(call: ToolCall, startedAt: number, progress: CallProgress, failure?: ResilienceError): number {
    const { callId, tenant, abort, tool } = call;
    const { started, attempts, replayed } = progress;
    return this.outcomes.finish({
      callId,
      toolId: tool.id,
      lane: tool.lane,
      tenant,
      pool: progress.replayedPool ?? call.pool,
      transport: call.transport,
      abort,
      startedAt,
      started,
      attempts,
      replayed,
      error: failure,
      audit: this.audit.of(tool, call.arguments),
    });
  }
}
