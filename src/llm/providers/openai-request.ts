import type { ChatRequest } from '../chat.types';
import type { MaxTokensField, ProviderAttempt, ProviderTarget } from './llm-provider';
import { forReasoningModel, isReasoningModel } from './reasoning-models';

/**
 * `max_completion_tokens` unless the target says otherwise: OpenAI's own API takes it for every
 * model and refuses `max_tokens` from its reasoning models; a compatible server that knows only
 * `max_tokens` is configured with `maxTokensField: max_tokens`.
 */
export const DEFAULT_MAX_TOKENS_FIELD: MaxTokensField = 'max_completion_tokens';

/**
 * The Chat Completions body an `openai` target gets for one attempt: the attempt's one output cap
 * in the one field the target reads (the client's own `max_tokens` and `max_completion_tokens`
 * never go as a second: OpenAI refuses both together, for every model), and for a reasoning
 * model without the sampling parameters it refuses (`forReasoningModel`). A new object each
 * time, the caller's to finish in place.
 */
export function openAiRequest(attempt: ProviderAttempt): ChatRequest {
  const { target } = attempt;
  const { max_tokens: _maxTokens, max_completion_tokens: _maxCompletionTokens, ...rest } = attempt.request;
  // `rest` is this attempt's own copy (as is what forReasoningModel makes of it): set in place, not copied again.
  const request = reasons(target) ? forReasoningModel(rest).request : rest;
  request[target.maxTokensField ?? DEFAULT_MAX_TOKENS_FIELD] = attempt.maxOutputTokens;
  return request;
}

/** The target's `reasoning` setting, else the rule on its model's id. */
export function reasons(target: ProviderTarget): boolean {
  return target.reasoning ?? isReasoningModel(target.model);
}
