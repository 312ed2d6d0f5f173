import type { LazyAbortController } from '../common';
import type { PoolName } from '../containment';
import { fromStored, type KeyedRun, scopedIdempotencyKey, type StoredOutcome } from '../idempotency';
import type { ChatAnswer, ChatCall } from './chat-call';
import type { ChatRequest } from './chat.types';
import type { FailoverProgress } from './routing/failover';
import type { LlmRoute } from './routing/llm-route';

/**
 * A chat request with an `Idempotency-Key`, as IdempotencyService.runOnce runs it: the first
 * request with a key runs to its end even if its client leaves, so that the client's retry gets
 * its answer instead of paying for a second one; a request with the same key while it runs joins
 * it, and one after it is answered the same (`replayed`, cost 0) for the retention window. The
 * same key with another request is `idempotency_conflict`.
 */
export class KeyedChatRun implements KeyedRun<ChatAnswer> {
  readonly key: string;
  readonly tenant: string;
  readonly fingerprinted: unknown;
  readonly abort: LazyAbortController;
  readonly pool: PoolName;

  constructor(
    call: ChatCall,
    route: LlmRoute,
    /** The client's request held to its output cap. */
    request: ChatRequest,
    idempotencyKey: string,
    readonly leaseMs: number,
    private readonly progress: FailoverProgress,
    private readonly execute: (abort: LazyAbortController) => Promise<ChatAnswer>,
  ) {
    this.key = scopedIdempotencyKey(call.tenant, `llm.${route.name}`, idempotencyKey);
    this.tenant = call.tenant;
    // A request as it came is part of what was asked: the same key with another of its fields conflicts.
    // Labelled `native`, as before the pass-through had its name: keys in flight keep their fingerprint.
    this.fingerprinted = call.passThrough ? { request, native: call.passThrough } : request;
    this.abort = call.abort;
    this.pool = call.pool;
  }

  get attempts(): number {
    return this.progress.attempts;
  }

  get started(): boolean {
    return this.progress.attempts > 0;
  }

  replay(outcome: StoredOutcome): ChatAnswer {
    if (!outcome.ok) throw fromStored(outcome);
    return { ...(outcome.result as ChatAnswer), costUsd: 0, replayed: true, streamed: false };
  }

  run(abort: LazyAbortController): Promise<ChatAnswer> {
    return this.execute(abort);
  }
}
