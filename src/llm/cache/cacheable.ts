import type { ChatCompletion, ChatRequest } from '../chat.types';
import type { EmbeddingsAnswer } from '../wire';

declare const cacheable: unique symbol;

/**
 * A completion that passed {@link isCacheable}: the only thing a cache store takes, so an error,
 * a tool call or a multi-choice answer cannot reach a store without a cast.
 */
export type CacheableCompletion = ChatCompletion & { readonly [cacheable]: true };

/** Embeddings that passed {@link isCacheableEmbeddings}: the other answer a cache store takes. */
export type CacheableEmbeddings = EmbeddingsAnswer & { readonly [cacheable]: true };

/** What the exact cache stores: a clean chat completion, or an embeddings list (their keys never meet). */
export type CacheableAnswer = CacheableCompletion | CacheableEmbeddings;

/**
 * Whether an answer may be stored and served to the next identical request: only a clean text
 * answer. That is exactly one choice (index 0), ending with `stop` or `length` (a cut at the
 * output cap is as reproducible as the cap, which is in the key), whose message holds non-empty
 * text and no tool calls, legacy function call or refusal.
 *
 * Left out, and why: tool calls act in the world and carry ids meant to be unique; a refusal
 * or `content_filter` is a moderation outcome that may not hold next time; an empty text is
 * more often a provider's hiccup than an answer, and storing it would repeat it for a whole
 * TTL. With `request`, a request for `n` other than 1 is never stored either, even when the
 * provider answered with one choice.
 */
export function isCacheable(
  completion: ChatCompletion,
  request?: Pick<ChatRequest, 'n'>,
): completion is CacheableCompletion {
  if (request?.n !== undefined && request.n !== 1) return false;
  return isCleanText(completion);
}

/**
 * {@link isCacheable} for a value of unknown shape (what a shared store hands back), or an
 * embeddings list ({@link isCacheableEmbeddings}).
 */
export function asCacheable(value: unknown): CacheableAnswer | null {
  return isCleanText(value) || isCacheableEmbeddings(value) ? (value as CacheableAnswer) : null;
}

/** Whether an entry is a chat completion (and not embeddings, which are stored under keys of their own). */
export function isCachedCompletion(entry: CacheableAnswer): entry is CacheableCompletion {
  return entry.object === 'chat.completion';
}

/**
 * Whether `value` is an embeddings list in the shape the route answers (what its wire reader
 * made): its vectors, in order, numbers or base64 each, and a usage. Any such answer is as
 * reproducible as its request: the same inputs, model, dimensions and format, the same vectors.
 */
export function isCacheableEmbeddings(value: unknown): value is CacheableEmbeddings {
  if (!isRecord(value) || value.object !== 'list' || typeof value.model !== 'string') return false;
  if (!isRecord(value.usage) || typeof value.usage.prompt_tokens !== 'number') return false;
  const { data } = value;
  if (!Array.isArray(data) || data.length === 0) return false;
  return data.every(
    (item: unknown, at) =>
      isRecord(item) &&
      item.index === at &&
      (typeof item.embedding === 'string' ||
        (Array.isArray(item.embedding) && item.embedding.every((x) => typeof x === 'number'))),
  );
}

function isCleanText(value: unknown): boolean {
  if (!isRecord(value) || value.object !== 'chat.completion') return false;
  if (typeof value.id !== 'string' || typeof value.model !== 'string' || !isRecord(value.usage)) return false;
  const choices = value.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return false;
  const choice: unknown = choices[0];
  if (!isRecord(choice) || choice.index !== 0) return false;
  if (choice.finish_reason !== 'stop' && choice.finish_reason !== 'length') return false;
  const message = choice.message;
  if (!isRecord(message)) return false;
  if (typeof message.content !== 'string' || message.content === '') return false;
  if (message.tool_calls != null && !(Array.isArray(message.tool_calls) && message.tool_calls.length === 0)) {
    return false;
  }
  return message.function_call == null && message.refusal == null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
