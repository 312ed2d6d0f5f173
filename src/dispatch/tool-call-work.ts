import {
  type LaneCall,
  type LaneWork,
  type LimitSignal,
  limitSignalOf,
  type PriorityClass,
  DEFAULT_PRIORITY,
} from '../bulkhead';
import type { LazyAbortController } from '../common';
import type { PoolName } from '../containment';
import type { AttemptCall } from './attempt-runner';
import type { AttemptBudget, CallAnswer, CallExecutor, ExecutionProgress } from './call-executor';
import type { ToolCall } from './tool-call';

/** What a call in its lane needs of the tool call (its idempotency key scoped, for the upstream). */
type LaneToolCall = Pick<
  ToolCall,
  'tool' | 'arguments' | 'callId' | 'tenant' | 'pool' | 'timeoutMs' | 'idempotencyKey'
> &
  Partial<Pick<ToolCall, 'queueTtlMs' | 'priority' | 'onProgress'>>;

/**
 * One tool call as its lane and its attempts see it: one object that is the lane's call (tenant,
 * abort, queue TTL), starts the attempts when
 * the call takes a slot, carries what each attempt needs, and holds the caller's answer (the
 * executor's result or the lane's refusal). One object instead of a closure, a deferred and an
 * attempt record per call, on the path every call takes.
 */
export class ToolCallWork implements LaneWork, LaneCall, AttemptCall, CallAnswer {
  readonly answer: Promise<unknown>;
  readonly callId: string;
  readonly tenant: string;
  readonly pool: PoolName;
  readonly idempotencyKey: string | undefined;
  /** The queue TTL the caller asked for; the lane's own when undefined. */
  readonly queueTtlMs: number | undefined;
  readonly priority: PriorityClass;
  readonly onProgress: ToolCall['onProgress'];
  private resolveAnswer!: (value: unknown) => void;
  private rejectAnswer!: (reason: unknown) => void;
  /** How the caller was answered, as the lane's adaptive limit reads it; unset until then. */
  private signal: LimitSignal | undefined;

  constructor(
    private readonly executor: CallExecutor,
    private readonly call: LaneToolCall,
    /** Stops the work: the caller's own, or a detached one for a keyed call. */
    readonly abort: LazyAbortController,
    private readonly progress: ExecutionProgress & { started: boolean },
    /** The money of the call's attempts, holding the first one's; none when the call costs nothing. */
    private readonly budget: AttemptBudget | undefined,
  ) {
    this.callId = call.callId;
    this.tenant = call.tenant;
    this.pool = call.pool;
    this.idempotencyKey = call.idempotencyKey;
    this.queueTtlMs = call.queueTtlMs;
    this.priority = call.priority ?? call.tool.priority ?? DEFAULT_PRIORITY;
    this.onProgress = call.onProgress;
    this.answer = new Promise((resolve, reject) => {
      this.resolveAnswer = resolve;
      this.rejectAnswer = reject;
    });
  }

  resolve(value: unknown): void {
    this.signal ??= 'sample';
    this.resolveAnswer(value);
  }

  reject(reason: unknown): void {
    if (this.signal === undefined) {
      const signal = limitSignalOf(reason, false);
      // A timeout the caller chose (X-Timeout-Ms under the tool's) is its own outcome, as the
      // breaker counts it: 1 ms calls must not shrink an adaptive lane for everyone.
      this.signal = signal === 'drop' && this.call.timeoutMs < this.call.tool.timeoutMs ? 'ignore' : signal;
    }
    this.rejectAnswer(reason);
  }

  start(): Promise<void> {
    this.progress.started = true;
    const { tool, timeoutMs } = this.call;
    return this.executor.run(tool, this.call.arguments, this, timeoutMs, this.progress, this, this.budget);
  }

  /** `start` settles once no handler runs, however the call was answered: the answer is what counts. */
  limitSignal(): LimitSignal {
    return this.signal ?? 'ignore';
  }

  /** Refused while waiting (expired, cancelled) or stopped at shutdown; after an answer this does nothing. */
  refuse(reason: unknown): void {
    this.reject(reason);
  }
}
