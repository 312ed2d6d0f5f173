import type { LazyAbortController } from '../common';
import { fromStored, type StoredOutcome } from '../idempotency';
import type { ChatAnswer, ChatCall } from './chat-call';
import type { ChatRequest } from './chat.types';
import { KeyedRouteRun } from './keyed-route-run';
import type { FailoverProgress } from './routing/failover';
import type { LlmRoute } from './routing/llm-route';

/** A chat request with an `Idempotency-Key` ({@link KeyedRouteRun}); a replay is never a stream. */
export class KeyedChatRun extends KeyedRouteRun<ChatAnswer> {
  constructor(
    call: ChatCall,
    route: LlmRoute,
    /** The client's request held to its output cap. */
    request: ChatRequest,
    idempotencyKey: string,
    leaseMs: number,
    progress: FailoverProgress,
    execute: (abort: LazyAbortController) => Promise<ChatAnswer>,
  ) {
    // A request as it came is part of what was asked: the same key with another of its fields conflicts.
    // Labelled `native`, as before the pass-through had its name: keys in flight keep their fingerprint.
    const fingerprinted = call.passThrough ? { request, native: call.passThrough } : request;
    super(call, route, idempotencyKey, fingerprinted, leaseMs, progress, execute);
  }

  replay(outcome: StoredOutcome): ChatAnswer {
    if (!outcome.ok) throw fromStored(outcome);
    return { ...(outcome.result as ChatAnswer), costUsd: 0, replayed: true, streamed: false };
  }
}
