import type { Clock } from '../../common';
import type { ChatChunk, ChatCompletion } from '../chat.types';
import { fromAnthropicAnswer } from './messages-to-chat-answer';
import { type AnthropicRequest, toAnthropicRequest } from './chat-to-messages-request';
import { betaHeaders, messagesPassThrough, nativeBody } from './messages-pass-through';
import { anthropicChunks, anthropicSseEvents } from './messages-to-chat-stream';
import type { LlmProvider, ProviderAttempt, ProviderTarget } from './llm-provider';
import { isCount, isObject } from './json-shape';
import { endpointUrl, postJson, postStream, providerEvents } from './provider-exchange';
import { malformedAnswerError } from './provider-errors';

/** @default base URL of an `anthropic` target without its own. */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';

/** The Messages API version every request names; its wire format is what the translation speaks. */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * Anthropic's Messages API behind the Chat Completions seam: the request translated on the way
 * out (`chat-to-messages-request.ts`), the answer on the way back (`messages-to-chat-answer.ts`, or
 * `messages-to-chat-stream.ts` for a stream). A request that cannot be said in it is refused before
 * anything is sent.
 */
export class AnthropicProvider implements LlmProvider {
  readonly name = 'anthropic';

  constructor(private readonly clock: Clock) {}

  async complete(attempt: ProviderAttempt): Promise<ChatCompletion> {
    const { target } = attempt;
    const native = messagesPassThrough(attempt);
    const answer = await postJson(
      attempt,
      messagesUrl(target),
      headersOf(attempt, 'application/json'),
      messagesRequest(attempt),
      this.clock,
    );
    const completion = fromAnthropicAnswer(target, answer, this.clock.wallNow());
    if (native) completion.passThroughAnswer = answer as Record<string, unknown>;
    return completion;
  }

  /** `POST /v1/messages/count_tokens` with the request's prompt: Anthropic's own count, free of charge. */
  async countTokens(attempt: ProviderAttempt): Promise<number> {
    const { target } = attempt;
    const request = messagesRequest(attempt) as Record<string, unknown>;
    const body = Object.fromEntries(
      COUNTED_FIELDS.filter((field) => field in request).map((field) => [field, request[field]]),
    );
    const answer = await postJson(
      attempt,
      endpointUrl(target.baseUrl ?? ANTHROPIC_BASE_URL, 'messages/count_tokens'),
      headersOf(attempt, 'application/json'),
      body,
      this.clock,
    );
    const counted = isObject(answer) ? answer.input_tokens : undefined;
    if (!isCount(counted)) throw malformedAnswerError(target, 200);
    return counted;
  }

  /** The same request with `stream: true`; Anthropic's stream always ends with the usage. */
  async *stream(attempt: ProviderAttempt): AsyncGenerator<ChatChunk> {
    const { target } = attempt;
    const body = { ...messagesRequest(attempt), stream: true };
    const answer = await postStream(
      attempt,
      messagesUrl(target),
      headersOf(attempt, 'text/event-stream'),
      body,
      this.clock,
    );
    const events = anthropicSseEvents(providerEvents(attempt, answer), target);
    yield* anthropicChunks(events, target, this.clock, messagesPassThrough(attempt) !== undefined);
  }
}

/** What Anthropic's `count_tokens` takes of a Messages request: the prompt, not how to answer it. */
const COUNTED_FIELDS = ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking'] as const;

/** The client's own body for a request that came in the Messages API, else the translation. */
function messagesRequest(attempt: ProviderAttempt): AnthropicRequest | Record<string, unknown> {
  const { target } = attempt;
  const native = messagesPassThrough(attempt);
  return native ? { model: target.model, ...nativeBody(attempt, native) } : toAnthropicRequest(attempt);
}

function messagesUrl(target: ProviderTarget): string {
  return endpointUrl(target.baseUrl ?? ANTHROPIC_BASE_URL, 'messages');
}

function headersOf(attempt: ProviderAttempt, accept: string): Record<string, string> {
  const { target } = attempt;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept,
    'anthropic-version': ANTHROPIC_VERSION,
    ...betaHeaders(messagesPassThrough(attempt)),
  };
  // An unset `${ANTHROPIC_API_KEY:-}` is an empty string: no header, and Anthropic's 401 says why.
  if (target.apiKey) headers['x-api-key'] = target.apiKey;
  return headers;
}
