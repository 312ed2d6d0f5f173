import type { Clock } from '../../common';
import type { ChatChunk, ChatCompletion, ChatRequest } from '../chat.types';
import { isCount, isObject } from './json-shape';
import type { LlmProvider, ProviderAttempt, ProviderTarget } from './llm-provider';
import { malformedAnswerError, streamCutError, streamErrorEvent } from './provider-errors';
import { endpointUrl, postJson, postStream, providerEvents } from './provider-exchange';

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
    const url = endpointUrl(target.baseUrl ?? OPENAI_BASE_URL, 'chat/completions');
    const answer = await postJson(
      attempt,
      url,
      headersOf(target, 'application/json'),
      wireRequest(attempt.request),
      this.clock,
    );
    return this.completion(target, answer);
  }

  /**
   * The chunks as given, through to `data: [DONE]`. The provider is always asked for its usage
   * (`stream_options.include_usage`), whatever the client asked: it is what the attempt is
   * charged; the route leaves the usage chunk out for a client that did not ask for it.
   */
  async *stream(attempt: ProviderAttempt): AsyncGenerator<ChatChunk> {
    const { target } = attempt;
    const url = endpointUrl(target.baseUrl ?? OPENAI_BASE_URL, 'chat/completions');
    const body = await postStream(
      attempt,
      url,
      headersOf(target, 'text/event-stream'),
      streamRequest(attempt.request),
      this.clock,
    );
    for await (const event of providerEvents(attempt, body)) {
      if (event.data === '[DONE]') return;
      let chunk: unknown;
      try {
        chunk = JSON.parse(event.data);
      } catch {
        throw malformedAnswerError(target, 200);
      }
      if (isObject(chunk) && chunk.error !== undefined)
        throw streamErrorEvent(target, chunk.error, this.clock.wallNow());
      yield this.chunk(target, chunk);
    }
    throw streamCutError(target);
  }

  /** A chunk as given, once it has what the route reads: choices with a delta (none for the usage chunk). */
  private chunk(target: ProviderTarget, chunk: unknown): ChatChunk {
    if (!isObject(chunk) || !Array.isArray(chunk.choices)) throw malformedAnswerError(target, 200);
    if (!chunk.choices.every((choice) => isObject(choice) && isObject(choice.delta))) {
      throw malformedAnswerError(target, 200);
    }
    const { usage } = chunk;
    if (usage != null && (!isObject(usage) || !isCount(usage.prompt_tokens) || !isCount(usage.completion_tokens))) {
      throw malformedAnswerError(target, 200);
    }
    // Freshly parsed and nobody else's: completed in place, not copied, once per chunk.
    if (typeof chunk.id !== 'string') chunk.id = '';
    chunk.object = 'chat.completion.chunk';
    if (!isCount(chunk.created)) chunk.created = Math.floor(this.clock.wallNow() / 1000);
    if (typeof chunk.model !== 'string') chunk.model = target.model;
    return chunk as ChatChunk;
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

function headersOf(target: ProviderTarget, accept: string): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept };
  // `${OPENAI_API_KEY:-}` leaves an empty string when unset: a local server then gets no header.
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  return headers;
}

/** One JSON body: `stream_options` is only valid with a stream. */
function wireRequest(request: ChatRequest): ChatRequest {
  const { stream_options: _streamOptions, ...rest } = request;
  return { ...rest, stream: false };
}

/** A stream that always reports its usage, in its last chunk. */
function streamRequest(request: ChatRequest): ChatRequest {
  const options =
    typeof request.stream_options === 'object' && request.stream_options !== null ? request.stream_options : {};
  return { ...request, stream: true, stream_options: { ...options, include_usage: true } };
}
