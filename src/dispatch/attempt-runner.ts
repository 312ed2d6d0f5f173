import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  CLOCK,
  type Clock,
  isPromiseLike,
  isResilienceError,
  LazyAbortController,
  noop,
  ResilienceError,
  stopReason,
} from '../common';
import { AttemptHttp, type HttpPool, HttpPools, type PoolName, type ToolHttp } from '../containment';
import { AttemptDeadline } from '../pipeline';
import type { ToolArguments, ToolContext, ToolDefinition, ToolProgress } from './tool';
import { ToolAttemptWrappers } from './tool-attempt-wrappers';

/** Who is calling: what an attempt needs of its call. */
export interface AttemptCall {
  callId: string;
  tenant: string;
  /** Aborted when the call is stopped (caller gone, shutdown); the attempt's handler is then aborted too. */
  abort: LazyAbortController;
  /** The call's idempotency key, scoped to its tenant and tool, for the upstream; if it has one. */
  idempotencyKey?: string;
  /** The HTTP pool the call was routed to. */
  pool: PoolName;
  /** Where the work's own progress goes, when its caller asked for it. */
  onProgress?: (update: ToolProgress) => void;
}

/** One attempt under way. */
export interface StartedAttempt {
  /**
   * The attempt's answer: the handler's result, or its error; `timeout` at the deadline and
   * the call's abort reason when the call is aborted, each as soon as the handler's signal
   * has been aborted, without waiting for the handler.
   */
  outcome: Promise<unknown>;
  /** Resolves once the handler itself has settled, however late; never rejects. */
  settled: Promise<void>;
}

class AttemptContext implements ToolContext {
  private client: AttemptHttp | undefined;

  constructor(
    readonly callId: string,
    readonly toolId: string,
    readonly tenant: string,
    readonly attempt: number,
    readonly idempotencyKey: string | undefined,
    private readonly httpPool: HttpPool,
    private readonly abort: LazyAbortController,
    readonly progress: ((update: ToolProgress) => void) | undefined,
  ) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get http(): ToolHttp {
    // Named as an http tool names its upstream: an unreachable one fails alike, whoever calls it.
    return (this.client ??= new AttemptHttp(this.httpPool, this.abort, `upstream of tool '${this.toolId}'`));
  }

  get pool(): PoolName {
    return this.httpPool.name;
  }
}

/**
 * Starts one attempt of a tool with its own AbortController (never one shared by the
 * breaker, docs/pitfalls.md #2): aborted when the call is, and at the attempt's deadline. The
 * caller hears `timeout` at the deadline, right after the handler was told to stop; whoever
 * holds the lane slot waits for `settled`, as the work has not stopped until the handler
 * returns. A handler's own unexpected error becomes `internal`, without its message.
 */
@Injectable()
export class AttemptRunner {
  private readonly logger = new Logger('Bulkhead');
  /** Asked per attempt only when some tool is wrapped (chaos): otherwise the attempt path is untouched. */
  private readonly wrappers: ToolAttemptWrappers | undefined;

  constructor(
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly pools: HttpPools,
    @Optional() @Inject(ToolAttemptWrappers) wrappers?: ToolAttemptWrappers | null,
  ) {
    this.wrappers = wrappers?.touchesTools ? wrappers : undefined;
  }

  start(tool: ToolDefinition, args: ToolArguments, call: AttemptCall, timeoutMs: number, attempt = 1): StartedAttempt {
    if (call.abort.aborted) return { outcome: Promise.reject(stopReason(call.abort.reason)), settled: SETTLED };
    const abort = new LazyAbortController();
    const pool = this.pools.get(call.pool);
    const context = new AttemptContext(
      call.callId,
      tool.id,
      call.tenant,
      attempt,
      call.idempotencyKey,
      pool,
      abort,
      call.onProgress,
    );
    const wrapper = this.wrappers?.forTool(tool.id);
    let returned: unknown;
    try {
      returned = wrapper
        ? wrapper.attempt(() => tool.handler(args, context), { callId: call.callId, lane: tool.lane, abort })
        : tool.handler(args, context);
    } catch (error) {
      return { outcome: Promise.reject(this.classify(tool, error)), settled: SETTLED };
    }
    // A handler that answered at once has finished: no deadline or abort can apply any more.
    if (!isPromiseLike(returned)) return { outcome: Promise.resolve(returned), settled: SETTLED };
    const handled = Promise.resolve(returned);
    const settled = handled.then(noop, noop);
    const { outcome } = new AttemptDeadline(
      this.clock,
      handled,
      timeoutMs,
      () => timeoutError(tool, timeoutMs),
      (error) => this.classify(tool, error),
      abort,
      call.abort,
    );
    return { outcome, settled };
  }

  private classify(tool: ToolDefinition, error: unknown): ResilienceError {
    if (isResilienceError(error)) return error;
    this.logger.warn(`tool '${tool.id}' threw ${describe(error)}; answered as internal${stackFrames(error)}`);
    return new ResilienceError('internal', `tool '${tool.id}' failed`);
  }
}

const SETTLED: Promise<void> = Promise.resolve();

function timeoutError(tool: ToolDefinition, timeoutMs: number): ResilienceError {
  return new ResilienceError('timeout', `tool '${tool.id}' did not finish within ${timeoutMs} ms`);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.constructor.name : typeof error;
}

/** The stack without its first line: where it failed, without a message that may hold arguments. */
function stackFrames(error: unknown): string {
  const stack = error instanceof Error ? error.stack : undefined;
  const frames = stack?.split('\n').filter((line) => line.trimStart().startsWith('at '));
  return frames?.length ? `\n${frames.join('\n')}` : '';
}
