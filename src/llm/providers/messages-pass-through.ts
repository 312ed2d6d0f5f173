import type { PassThroughRequest } from '../chat.types';
import type { ProviderAttempt } from './llm-provider';

/** Fields Bedrock refuses ("extraneous key"): Anthropic's own API takes them, Bedrock's does not. */
const NOT_ON_BEDROCK = ['metadata', 'service_tier'];

/**
 * The client's body for this attempt: its `max_tokens` held to the attempt's output cap (the
 * bound its reservation assumes), any `stream` left to the provider.
 */
export function nativeBody(attempt: ProviderAttempt, native: PassThroughRequest): Record<string, unknown> {
  return { ...native.body, max_tokens: attempt.maxOutputTokens };
}

/** {@link nativeBody} for Bedrock's InvokeModel: no `model`, the betas in the body, what it refuses left out. */
export function nativeBedrockBody(
  attempt: ProviderAttempt,
  native: PassThroughRequest,
  anthropicVersion: string,
): Record<string, unknown> {
  const body: Record<string, unknown> = { anthropic_version: anthropicVersion, ...nativeBody(attempt, native) };
  for (const field of NOT_ON_BEDROCK) delete body[field];
  if (native.betas.length > 0) body.anthropic_beta = [...native.betas];
  return body;
}

/** The `anthropic-beta` header Anthropic is sent, when the client named any. */
export function betaHeaders(native: PassThroughRequest | undefined): Record<string, string> {
  return native && native.betas.length > 0 ? { 'anthropic-beta': native.betas.join(',') } : {};
}

/**
 * The attempt's request as its client sent it, when it came in the Messages API that `anthropic`
 * and `bedrock` targets speak: the pass-through pair (sent nearly as it came, answered as the
 * target answered); undefined for any other request, which is translated.
 */
export function messagesPassThrough(attempt: ProviderAttempt): PassThroughRequest | undefined {
  return attempt.passThrough?.format === 'anthropic-messages' ? attempt.passThrough : undefined;
}
