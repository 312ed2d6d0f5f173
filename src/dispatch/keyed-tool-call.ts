import type { Awaitable, LazyAbortController } from '../common';
import type { PoolName } from '../containment';
import { fromStored, type KeyedRun, type StoredOutcome } from '../idempotency';
import type { ExecutionProgress } from './call-executor';
import type { ToolCallBudget } from './tool-call-budget';
import type { ToolCall } from './tool-call';

/** A tool call's progress as the pipeline keeps it (see CallPipeline). */
export interface KeyedToolProgress extends ExecutionProgress {
  started: boolean;
  replayed: boolean;
  replayedPool?: PoolName;
}

/**
 * A tool call with an `Idempotency-Key`, as IdempotencyService.runOnce runs it. Every paid run
 * is charged, however long it waited: a wait on another replica's run of the key may outlast the
 * first attempt's hold (its lease is the whole call's, the hold one attempt's), so the money is
 * given back before waiting and held again if this call leads.
 */
export class KeyedToolCall implements KeyedRun<unknown> {
  readonly tenant: string;
  readonly fingerprinted: unknown;
  readonly abort: LazyAbortController;
  readonly pool: PoolName;

  constructor(
    private readonly call: ToolCall,
    readonly key: string,
    readonly leaseMs: number,
    private readonly progress: KeyedToolProgress,
    private readonly budget: ToolCallBudget | undefined,
    /** Runs the call (lane, breaker, attempts) with `abort` in place of its caller's. */
    private readonly runCall: (call: ToolCall, abort: LazyAbortController) => Promise<unknown>,
  ) {
    this.tenant = call.tenant;
    this.fingerprinted = call.arguments;
    this.abort = call.abort;
    this.pool = call.pool;
  }

  get attempts(): number {
    return this.progress.attempts;
  }

  get started(): boolean {
    return this.progress.started;
  }

  beforeWaiting(): Awaitable<void> {
    return this.budget?.release();
  }

  leadAfterWaiting(): Awaitable<void> {
    return this.budget?.holdFirstAgain();
  }

  /** Another call's outcome costs this one nothing: its money is freed now, not after the wait. */
  follows(): Awaitable<void> {
    this.progress.replayed = true;
    return this.budget?.release();
  }

  replay(outcome: StoredOutcome): unknown {
    this.progress.attempts = outcome.attempts;
    if (!outcome.ok) throw fromStored(outcome);
    this.progress.replayedPool = outcome.pool;
    return outcome.result;
  }

  run(abort: LazyAbortController): Promise<unknown> {
    // The upstream gets the scoped key, never the caller's own.
    return this.runCall({ ...this.call, idempotencyKey: this.key }, abort);
  }
}
