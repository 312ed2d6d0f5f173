import type { ChatCompletion, ChatRequest, PassThroughRequest } from './chat.types';
import type { RouteCall } from './route-call';
import type { ChatStreamSink } from './streaming/chat-stream-sink';

/** One validated chat request, with its caller, ready for the route. */
export interface ChatCall extends RouteCall {
  request: ChatRequest;
  /**
   * The request as it came, when it came in another wire format than Chat Completions: what a
   * target that speaks that format is sent instead of `request`. Part of the cache key and the
   * idempotency fingerprint; nothing else on the route reads it.
   */
  passThrough?: PassThroughRequest;
  /** A streamed request (`stream: true`): where its answer goes from the commit point on. */
  sink?: ChatStreamSink;
}

/** What the client gets: the completion and who served it, how. */
export interface ChatAnswer {
  completion: ChatCompletion;
  /** `provider/model`, or `cache`. */
  servedBy: string;
  attempts: number;
  /** `hit`: the exact cache; `semantic`: the answer of a similar question. */
  cache: 'hit' | 'semantic' | 'miss' | 'bypass';
  /** A semantic hit: how similar its question was to this one (cosine, 0..1). */
  similarity?: number;
  costUsd: number;
  /** The answer of an earlier request with the same `Idempotency-Key`. */
  replayed: boolean;
  /** The answer came from a hedge. */
  hedged: boolean;
  /** Streamed: it already went to the client through the sink, as the provider streamed it. */
  streamed: boolean;
}
