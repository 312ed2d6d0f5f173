import type { ChatRequest } from '../chat.types';

/** A request as every attempt sends it, held to the output cap its reservations assume. */
export interface CappedRequest {
  request: ChatRequest;
  /** Output tokens per choice, at most. */
  outputCap: number;
}

/**
 * The client's request with one output cap that every target is held to: the route's
 * `maxOutputTokens` when the client set none (as `max_tokens`); the smaller of the two, in both,
 * when it set `max_tokens` and `max_completion_tokens` (a reservation made for one would not
 * bound the other). The fields are the request's, for its estimate and its fingerprint: what a
 * target gets is `outputCap`, which each provider writes in the one field its target reads (an
 * `openai` target never gets both: OpenAI refuses them together).
 */
export function cappedRequest(request: ChatRequest, routeCap: number): CappedRequest {
  const { max_tokens: maxTokens, max_completion_tokens: maxCompletionTokens } = request;
  if (maxTokens === undefined && maxCompletionTokens === undefined) {
    return { request: { ...request, max_tokens: routeCap }, outputCap: routeCap };
  }
  if (maxTokens === undefined || maxCompletionTokens === undefined) {
    return { request, outputCap: (maxCompletionTokens ?? maxTokens)! };
  }
  const outputCap = Math.min(maxTokens, maxCompletionTokens);
  if (maxTokens === maxCompletionTokens) return { request, outputCap };
  return { request: { ...request, max_tokens: outputCap, max_completion_tokens: outputCap }, outputCap };
}
