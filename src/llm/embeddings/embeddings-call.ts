import type { RouteCall } from '../route-call';
import type { EmbeddingsAnswer, EmbeddingsRequest } from '../wire';

/** One validated embeddings request, with its caller, ready for its route. */
export interface EmbeddingsCall extends RouteCall {
  request: EmbeddingsRequest;
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
