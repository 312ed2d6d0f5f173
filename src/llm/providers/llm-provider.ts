import type { ToolHttp } from '../../containment';
import type { ChatChunk, ChatCompletion, ChatRequest, PassThroughRequest } from '../chat.types';
import type { ChunkBatch } from '../streaming/chunk-batch';
import type { EmbeddingsAnswer, EmbeddingsRequest } from '../wire';

/** Where an `openai` target takes the output cap. */
export type MaxTokensField = 'max_completion_tokens' | 'max_tokens';

/** One target of a route as its provider needs it: never the caller's credentials. */
export interface ProviderTarget {
  /** `openai`, `anthropic`, `bedrock`, `fake`. */
  readonly provider: string;
  /** The provider's model id, sent in place of the route's name. */
  readonly model: string;
  /** Where requests go; each provider has its default. */
  readonly baseUrl?: string;
  /** From the config (`${ENV}`); never logged, never in an error, event or metric. */
  readonly apiKey?: string;
  /** `bedrock`: the AWS region. */
  readonly region?: string;
  /** `openai`: the field the output cap goes in; `max_completion_tokens` when left out. */
  readonly maxTokensField?: MaxTokensField;
  /** `openai`: whether its model is a reasoning model; decided by the model's id when left out. */
  readonly reasoning?: boolean;
  /** `openai`: whether it serves OpenAI's Responses API; when left out, whether it is OpenAI's own API. */
  readonly responsesApi?: boolean;
}

/** What every attempt at one target carries, whatever it asks the target for. */
export interface AttemptChannel {
  readonly target: ProviderTarget;
  /** The call's HTTP pool (normal or isolated) under the egress rules, stopped with the attempt. */
  readonly http: ToolHttp;
  /**
   * Fires when the attempt times out, the client leaves or shutdown stops the call. `http`
   * already stops with the attempt; read this only for other waits (it may be made on first use).
   */
  readonly signal: AbortSignal;
  /**
   * The attempt's own time limit: its requests may wait this long for an answer, however much
   * shorter the pool's own limit is (a model can take minutes to answer).
   */
  readonly timeoutMs: number;
}

/** One attempt at one target of an embeddings request. */
export interface EmbeddingAttempt extends AttemptChannel {
  /** The client's request with `model` set to the target's model. */
  readonly request: EmbeddingsRequest;
}

/** One attempt at one target. */
export interface ProviderAttempt extends AttemptChannel {
  /**
   * The client's request with `model` set to the target's model. Its output cap is
   * {@link maxOutputTokens}, which each provider writes in the field its target reads.
   */
  readonly request: ChatRequest;
  /**
   * The output cap of this attempt, in tokens (the client's `max_completion_tokens`/`max_tokens`,
   * else the route's `maxOutputTokens`): the reservation made for this attempt is a true bound
   * only if the provider is held to it.
   */
  readonly maxOutputTokens: number;
  /**
   * The request as its client sent it, in another wire format: a provider that speaks that format
   * sends it instead of translating `request` (and answers with its own answer beside).
   */
  readonly passThrough?: PassThroughRequest;
}

/**
 * The seam between the route and a model provider: one request in the OpenAI shape, one
 * `chat.completion` back, whatever the provider speaks on the wire. Translation happens here and
 * nowhere above.
 *
 * A failure is a ResilienceError whose kind says what the route does next (see
 * `provider-errors.ts`): `transient` and `timeout` are retried on this target, then the next
 * target is tried; any other kind moves to the next target at once.
 */
export interface LlmProvider {
  readonly name: string;
  complete(attempt: ProviderAttempt): Promise<ChatCompletion>;
  /**
   * The answer as `chat.completion.chunk`s, as they arrive, finishing when the provider says the
   * answer is complete (an end it does not announce is `streamCutError`). The provider is always
   * asked for its usage: the chunk that carries it (`usage`, maybe with no choices) comes last.
   * Failures are thrown as {@link complete} throws them, before the first chunk or mid-way; the
   * route knows which. Ending the iteration early (`return()`) or the attempt's abort cancels the
   * provider's request at once. Chunks are yielded as soon as each is read: no read-ahead, so a
   * slow reader holds the provider back (TCP) instead of filling memory.
   */
  stream(attempt: ProviderAttempt): AsyncIterable<ChatChunk>;
  /**
   * {@link stream} a read of the provider's body at a time, for a provider whose chunks are Chat
   * Completions' own (OpenAI's): each chunk with the event it came in, which the route sends on
   * as it is where it has nothing to change in it. Same ending, failures and cancellation as
   * {@link stream}; the route reads this one where a provider has it.
   */
  streamBatches?(attempt: ProviderAttempt): AsyncIterable<ChunkBatch>;
  /**
   * The input tokens of the attempt's request, as the provider itself counts them, where it has
   * an endpoint for that (Anthropic's `count_tokens`). Free of charge; fails as {@link complete}.
   */
  countTokens?(attempt: ProviderAttempt): Promise<number>;
  /**
   * Embeddings of the attempt's inputs, in OpenAI's shape, one vector per input in the inputs'
   * order, validated at the wire (a malformed answer fails as `bad_response`, as `complete`'s).
   * A provider without it cannot serve an embeddings route. Fails as {@link complete}.
   */
  embed?(attempt: EmbeddingAttempt): Promise<EmbeddingsAnswer>;
}
