import type { Clock } from '../../common';
import type { ChatChunk, ChatCompletion, ChatRequest } from '../chat.types';
import type { ChunkBatch } from '../streaming/chunk-batch';
import { carriesContent } from '../streaming/stream-assembly';
import { isCount, isObject } from './json-shape';
import type { LlmProvider, ProviderAttempt, ProviderTarget } from './llm-provider';
import { malformedAnswerError, streamCutError, streamErrorEvent } from './provider-errors';
import { endpointUrl, postJson, postStream, providerEventBatches } from './provider-exchange';

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
    for await (const batch of this.streamBatches(attempt)) yield* batch.chunks;
  }

  /**
   * {@link stream} a read of the body at a time, each chunk with its event as it came: a chunk
   * that has every field the route reads is its JSON text as given, which the route may send on
   * as it is. The first chunk with content ends a batch of its own: the route commits on it, and
   * its client gets it without waiting for the rest of the read to be parsed.
   */
  async *streamBatches(attempt: ProviderAttempt): AsyncGenerator<ChunkBatch> {
    const { target } = attempt;
    const url = endpointUrl(target.baseUrl ?? OPENAI_BASE_URL, 'chat/completions');
    const body = await postStream(
      attempt,
      url,
      headersOf(target, 'text/event-stream'),
      streamRequest(attempt.request),
      this.clock,
    );
    let contentSeen = false;
    for await (const events of providerEventBatches(attempt, body)) {
      let chunks: ChatChunk[] = [];
      let wire: Array<string | undefined> = [];
      for (const { data } of events) {
        if (data === '[DONE]') {
          if (chunks.length > 0) yield { chunks, wire };
          return;
        }
        let chunk: ChatChunk;
        let asGiven: boolean;
        try {
          ({ chunk, asGiven } = this.parsedChunk(target, data));
        } catch (failure) {
          // What came before a failure reaches the client before the failure does.
          if (chunks.length > 0) yield { chunks, wire };
          throw failure;
        }
        chunks.push(chunk);
        // One data line is the chunk's JSON text itself; several are framed again when sent.
        wire.push(asGiven && !data.includes('\n') ? `data: ${data}\n\n` : undefined);
        if (!contentSeen && carriesContent(chunk)) {
          contentSeen = true;
          yield { chunks, wire };
          chunks = [];
          wire = [];
        }
      }
      if (chunks.length > 0) yield { chunks, wire };
    }
    throw streamCutError(target);
  }

  /** One event's chunk; a provider's error event and an unreadable chunk are thrown. */
  private parsedChunk(target: ProviderTarget, data: string): { chunk: ChatChunk; asGiven: boolean } {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      throw malformedAnswerError(target, 200);
    }
    if (isObject(parsed) && parsed.error !== undefined)
      throw streamErrorEvent(target, parsed.error, this.clock.wallNow());
    const asGiven = this.completeChunk(target, parsed);
    return { chunk: parsed as ChatChunk, asGiven };
  }

  /**
   * Makes a chunk as given one the route can read: choices with a delta (none for the usage
   * chunk), the fields it reads filled in where missing. True when nothing was filled in.
   */
  private completeChunk(target: ProviderTarget, chunk: unknown): boolean {
    if (!isObject(chunk) || !Array.isArray(chunk.choices)) throw malformedAnswerError(target, 200);
    // A loop, not every() with a closure: this runs for every chunk of every stream.
    for (const choice of chunk.choices as unknown[]) {
      if (!isObject(choice) || !isObject(choice.delta)) throw malformedAnswerError(target, 200);
    }
    const { usage } = chunk;
    if (usage != null && !isUsage(usage)) throw malformedAnswerError(target, 200);
    // Freshly parsed and nobody else's: completed in place, not copied, once per chunk.
    let asGiven = true;
    if (typeof chunk.id !== 'string') {
      chunk.id = '';
      asGiven = false;
    }
    if (chunk.object !== 'chat.completion.chunk') {
      chunk.object = 'chat.completion.chunk';
      asGiven = false;
    }
    if (!isCount(chunk.created)) {
      chunk.created = Math.floor(this.clock.wallNow() / 1000);
      asGiven = false;
    }
    if (typeof chunk.model !== 'string') {
      chunk.model = target.model;
      asGiven = false;
    }
    return asGiven;
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
    if (!isUsage(usage)) throw malformedAnswerError(target, 200);
    return {
      ...answer,
      object: 'chat.completion',
      created: isCount(answer.created) ? answer.created : Math.floor(this.clock.wallNow() / 1000),
      model: typeof answer.model === 'string' ? answer.model : target.model,
      usage: {
        ...usage,
        total_tokens: isCount(usage.total_tokens)
          ? usage.total_tokens
          : (usage.prompt_tokens as number) + (usage.completion_tokens as number),
      },
    } as ChatCompletion;
  }
}

/**
 * Usage with both counts numbers. Any number passes as given: a count that is negative,
 * fractional or past what the request could use is the account's to bound and count
 * (request-account.ts), not a reason to lose the answer.
 */
function isUsage(usage: unknown): usage is Record<string, unknown> {
  return isObject(usage) && typeof usage.prompt_tokens === 'number' && typeof usage.completion_tokens === 'number';
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
