import type { LazyAbortController } from '../../common';
import type { PoolName } from '../../containment';
import { fromStored, type KeyedRun, scopedIdempotencyKey, type StoredOutcome } from '../../idempotency';
import type { FailoverProgress } from '../routing/failover';
import type { LlmRoute } from '../routing/llm-route';
import type { EmbeddingsCall, EmbeddingsReply } from './embeddings-call';

/**
 * An embeddings request with an `Idempotency-Key`, as KeyedChatRun is a chat request's: the
 * first request with a key runs to its end even if its client leaves; the same key while it runs
 * joins it, and after it is answered the same (`replayed`, cost 0) for the retention window. The
 * same key with another request is `idempotency_conflict`. Keys are the route's own, shared with
 * its chat requests (`llm.<route>`): a request of one kind never replays another's answer, since
 * their fingerprints differ.
 */
export class KeyedEmbeddingsRun implements KeyedRun<EmbeddingsReply> {
  readonly key: string;
  readonly tenant: string;
  readonly fingerprinted: unknown;
  readonly abort: LazyAbortController;
  readonly pool: PoolName;

  constructor(
    call: EmbeddingsCall,
    route: LlmRoute,
    idempotencyKey: string,
    readonly leaseMs: number,
    private readonly progress: FailoverProgress,
    private readonly execute: (abort: LazyAbortController) => Promise<EmbeddingsReply>,
  ) {
    this.key = scopedIdempotencyKey(call.tenant, `llm.${route.name}`, idempotencyKey);
    this.tenant = call.tenant;
    // Labelled, so that no chat request's fingerprint can equal it.
    this.fingerprinted = { embeddings: call.request };
    this.abort = call.abort;
    this.pool = call.pool;
  }

  get attempts(): number {
    return this.progress.attempts;
  }

  get started(): boolean {
    return this.progress.attempts > 0;
  }

  replay(outcome: StoredOutcome): EmbeddingsReply {
    if (!outcome.ok) throw fromStored(outcome);
    return { ...(outcome.result as EmbeddingsReply), costUsd: 0, replayed: true };
  }

  run(abort: LazyAbortController): Promise<EmbeddingsReply> {
    return this.execute(abort);
  }
}
