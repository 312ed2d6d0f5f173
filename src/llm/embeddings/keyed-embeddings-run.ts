import type { LazyAbortController } from '../../common';
import { fromStored, type StoredOutcome } from '../../idempotency';
import { KeyedRouteRun } from '../keyed-route-run';
import type { FailoverProgress } from '../routing/failover';
import type { LlmRoute } from '../routing/llm-route';
import type { EmbeddingsCall, EmbeddingsReply } from './embeddings-call';

/**
 * An embeddings request with an `Idempotency-Key` ({@link KeyedRouteRun}). Its keys are the
 * route's, shared with its chat requests: its fingerprint is labelled, so that no chat request's
 * can equal it.
 */
export class KeyedEmbeddingsRun extends KeyedRouteRun<EmbeddingsReply> {
  constructor(
    call: EmbeddingsCall,
    route: LlmRoute,
    idempotencyKey: string,
    leaseMs: number,
    progress: FailoverProgress,
    execute: (abort: LazyAbortController) => Promise<EmbeddingsReply>,
  ) {
    super(call, route, idempotencyKey, { embeddings: call.request }, leaseMs, progress, execute);
  }

  replay(outcome: StoredOutcome): EmbeddingsReply {
    if (!outcome.ok) throw fromStored(outcome);
    return { ...(outcome.result as EmbeddingsReply), costUsd: 0, replayed: true };
  }
}
