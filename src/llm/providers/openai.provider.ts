import type { Clock } from '../../common';
import type { ChatCompletion, ChatRequest } from '../chat.types';
import { isCount, isObject } from './json-shape';
import type { LlmProvider, ProviderAttempt, ProviderTarget } from './llm-provider';
import { malformedAnswerError } from './provider-errors';
import { endpointUrl, postJson } from './provider-exchange';

/** @default base URL of an `openai` target without its own. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * Any OpenAI-compatible Chat Completions endpoint (OpenAI, Azure-style proxies, vLLM, Ollama,
 * llama.cpp): the request goes as the client sent it, fields Bulkhead does not know included,
 * and the answer comes back as given. Only the target's key is sent, and only if it has one.
 */
export class OpenAiProvider implements LlmProvider {
  readonly name = 'openai';

  constructor(private readonly clock: Clock) {}

  async complete(attempt: ProviderAttempt): Promise<ChatCompletion> {
    const { target } = attempt;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    // `${OPENAI_API_KEY:-}` leaves an empty string when unset: a local server then gets no header.
    if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
    const url = endpointUrl(target.baseUrl ?? OPENAI_BASE_URL, 'chat/completions');
    const answer = await postJson(attempt, url, headers, wireRequest(attempt.request), this.clock);
    return this.completion(target, answer);
  }

  /** The answer as given, once it has what the route reads: choices with a message, and usage. */
  private completion(target: ProviderTarget, answer: unknown): ChatCompletion {
    if (!isObject(answer) || typeof answer.id !== 'string') throw malformedAnswerError(target, 200);
    const { choices, usage } = answer;
    const readableChoices =
      Array.isArray(choices) &&
      choices.length > 0 &&
      choices.every((choice) => isObject(choice) && isObject(choice.message));
    if (!readableChoices) throw malformedAnswerError(target, 200);
    if (!isObject(usage) || !isCount(usage.prompt_tokens) || !isCount(usage.completion_tokens)) {
      throw malformedAnswerError(target, 200);
    }
    return {
      ...answer,
      object: 'chat.completion',
      created: isCount(answer.created) ? answer.created : Math.floor(this.clock.wallNow() / 1000),
      model: typeof answer.model === 'string' ? answer.model : target.model,
      usage: {
        ...usage,
        total_tokens: isCount(usage.total_tokens) ? usage.total_tokens : usage.prompt_tokens + usage.completion_tokens,
      },
    } as ChatCompletion;
  }
}

/** Streaming is not carried yet: the answer is always one JSON body, and `stream_options` needs a stream. */
function wireRequest(request: ChatRequest): ChatRequest {
  const { stream_options: _streamOptions, ...rest } = request;
  return { ...rest, stream: false };
}
