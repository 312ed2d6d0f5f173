import type { ChatRequest, PassThroughRequest } from '../chat.types';
import type { ProviderAttempt, ProviderTarget } from './llm-provider';
import { reasons } from './openai-request';
import { forReasoningModel } from './reasoning-models';

/** OpenAI's own API: the one base URL whose targets speak the Responses API unless told otherwise. */
const OPENAI_API_HOST = 'api.openai.com';

/**
 * Whether `target` is sent a Responses request as it came: its `responsesApi` setting, else
 * whether its base URL is OpenAI's own API (no base URL is OpenAI's). A compatible server (vLLM,
 * Ollama, a proxy) gets Chat Completions unless its operator says it serves `/responses`.
 */
export function speaksResponses(target: ProviderTarget, defaultBaseUrl: string): boolean {
  if (target.provider !== 'openai') return false;
  if (target.responsesApi !== undefined) return target.responsesApi;
  try {
    return new URL(target.baseUrl ?? defaultBaseUrl).hostname === OPENAI_API_HOST;
  } catch {
    return false;
  }
}

/**
 * The attempt's request as its client sent it, when it came in OpenAI's Responses API and its
 * target speaks it: the pass-through pair (sent nearly as it came, answered as the target
 * answered); undefined for any other request or target, which gets Chat Completions.
 */
export function responsesPassThrough(attempt: ProviderAttempt, defaultBaseUrl: string): PassThroughRequest | undefined {
  const native = attempt.passThrough;
  return native?.format === 'openai-responses' && speaksResponses(attempt.target, defaultBaseUrl) ? native : undefined;
}

/**
 * The client's body (references resolved) for this attempt: the target's model, the attempt's
 * output cap (the bound its reservation assumes), one JSON answer, and `store: false`: Bulkhead
 * keeps what it keeps itself, and a target's own copy would be a second, unaccounted one. A
 * reasoning model is sent it without the sampling parameters it refuses, as for chat.
 */
export function nativeResponsesBody(attempt: ProviderAttempt, native: PassThroughRequest): Record<string, unknown> {
  const { target } = attempt;
  const body: Record<string, unknown> = {
    ...native.body,
    model: target.model,
    max_output_tokens: attempt.maxOutputTokens,
    store: false,
    stream: false,
  };
  return reasons(target) ? forReasoningModel(body as ChatRequest).request : body;
}
