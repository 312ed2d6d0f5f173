import type { LazyAbortController } from '../../common';
import type { PoolName } from '../../containment';
import type { HeaderSink } from '../../rate-limit';
import type { EmbeddingsAnswer, EmbeddingsRequest } from '../wire';

/** One validated embeddings request, with its caller, ready for its route. */
export interface EmbeddingsCall {
  request: EmbeddingsRequest;
  callId: string;
  tenant: string;
  /** The HTTP pool the containment snapshot gave this call. */
  pool: PoolName;
  abort: LazyAbortController;
  /** The request's `Cache-Control`. */
  cacheControl?: string;
  /** Where the RateLimit headers go. */
  headers?: HeaderSink;
  /** The caller's `Idempotency-Key`, validated. */
  idempotencyKey?: string;
}

/** What the client gets: the vectors, and who served them, how (the chat answer's meta). */
export interface EmbeddingsReply {
  answer: EmbeddingsAnswer;
  /** `provider/model`, or `cache`. */
  servedBy: string;
  attempts: number;
  /** `hit`: the exact cache. */
  cache: 'hit' | 'miss' | 'bypass';
  costUsd: number;
  /** The answer of an earlier request with the same `Idempotency-Key`. */
  replayed: boolean;
  /** The answer came from a hedge. */
  hedged: boolean;
}
