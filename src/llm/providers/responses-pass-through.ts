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

/** What a reasoning item carries when `include` asks for it: all a target that keeps nothing can read it by. */
const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

/**
 * The client's body (references resolved) for this attempt: the target's model, the attempt's
 * output cap (the bound its reservation assumes), a stream or one JSON answer as `stream` says,
 * and `store: false`: Bulkhead
 * keeps what it keeps itself, and a target's own copy would be a second, unaccounted one. A
 * reasoning model is sent it without the sampling parameters it refuses, as for chat, and always
 * asked for its reasoning's `encrypted_content`: with `store: false` it is all the model can read
 * its reasoning back by, and a kept response continued by `previous_response_id` (the Agents
 * SDK, the Vercel AI SDK by default) sends back the items Bulkhead kept.
 */
export function nativeResponsesBody(
  attempt: ProviderAttempt,
  native: PassThroughRequest,
  stream: boolean,
): Record<string, unknown> {
  const { target } = attempt;
  const body: Record<string, unknown> = {
    ...native.body,
    input: readableInput(native.body.input),
    model: target.model,
    max_output_tokens: attempt.maxOutputTokens,
    store: false,
    stream,
  };
  if (!reasons(target)) return body;
  // A model that does not reason refuses the include ("Encrypted content is not supported with this model").
  const include = Array.isArray(body.include) ? (body.include as unknown[]) : [];
  if (!include.includes(ENCRYPTED_REASONING)) body.include = [...include, ENCRYPTED_REASONING];
  return forReasoningModel(body as ChatRequest).request;
}

/**
 * The input without the reasoning items the target cannot read: one with no `encrypted_content`
 * names the reasoning by its id alone, which a target that kept nothing (`store: false`) refuses
 * ("Item with id 'rs_…' not found"). Without it the model answers without that reasoning.
 */
function readableInput(input: unknown): unknown {
  if (!Array.isArray(input)) return input;
  return input.filter((item: unknown) => {
    const entry = item as { type?: unknown; encrypted_content?: unknown } | null;
    return entry?.type !== 'reasoning' || typeof entry.encrypted_content === 'string';
  });
}
