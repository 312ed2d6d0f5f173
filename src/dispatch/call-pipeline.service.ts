import { Inject, Injectable } from '@nestjs/common';
import { LaneRegistry, laneRejectionError } from '../bulkhead';
import { CLOCK, type Clock, isResilienceError, type LazyAbortController, ResilienceError } from '../common';
import { CallOutcomes } from '../events';
import { AttemptRunner } from './attempt-runner';
import type { ToolArguments, ToolDefinition } from './tool';

/** One validated tool call, ready for the pipeline. */
export interface ToolCall {
  tool: ToolDefinition;
  arguments: ToolArguments;
  callId: string;
  tenant: string;
  /** Aborted when the client disconnects or shutdown stops the call. */
  abort: LazyAbortController;
  timeoutMs: number;
  queueTtlMs: number | undefined;
}

/** The success body of API.md section 2. */
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

/**
 * One tool call through the steps of API.md section 3, in order. Each step is a small
 * injectable; a step that refuses the call leaves no trace in the steps after it.
 * Containment, rate limits, budgets, idempotency, breakers and retries slot in where marked.
 */
@Injectable()
export class CallPipeline {
  constructor(
    private readonly lanes: LaneRegistry,
    private readonly attempts: AttemptRunner,
    private readonly outcomes: CallOutcomes,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async invoke(call: ToolCall): Promise<ToolCallSuccess> {
    const { tool } = call;
    const lane = this.lanes.get(tool.lane)!;
    const startedAt = this.clock.now();
    let started = false;
    try {
      // 2. validate input, before the call is admitted anywhere.
      tool.validate(call.arguments);
      // 3-6. containment, rate limit, budget, idempotency: their issues add them here.
      // 7. lane admission: run now, wait, or refuse at once.
      const admitted = lane.run(
        () => {
          started = true;
          // 8-9. circuit breaker, then attempts with per-attempt timeout (and, later, retries).
          return this.attempts.run(tool, call.arguments, call, call.timeoutMs);
        },
        { tenant: call.tenant, abort: call.abort, queueTtlMs: call.queueTtlMs },
      );
      if (typeof admitted === 'string') throw laneRejectionError(lane, admitted);
      const result = await admitted;
      const durationMs = this.finish(call, startedAt, started);
      return {
        callId: call.callId,
        toolId: tool.id,
        lane: lane.name,
        pool: 'normal',
        // `undefined` would drop the field from the JSON body.
        result: result === undefined ? null : result,
        attempts: 1,
        durationMs,
        replayed: false,
      };
    } catch (error) {
      const failure = asResilienceError(error).withAttempts(started ? 1 : 0);
      this.finish(call, startedAt, started, failure);
      throw failure;
    }
  }

  /** 10. settle and record; returns the call's duration in milliseconds. */
  private finish(call: ToolCall, startedAt: number, started: boolean, failure?: ResilienceError): number {
    const { callId, tenant, abort, tool } = call;
    const ending = { callId, toolId: tool.id, lane: tool.lane, tenant, abort, startedAt, started };
    return this.outcomes.finish(failure ? { ...ending, error: failure } : ending);
  }
}

function asResilienceError(error: unknown): ResilienceError {
  return isResilienceError(error) ? error : new ResilienceError('internal', 'internal error', { cause: error });
}
