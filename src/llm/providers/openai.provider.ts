import type { Clock } from '../../common';
import type { ChatChunk, ChatCompletion, ChatRequest, PassThroughRequest } from '../chat.types';
import type { EmbeddingsAnswer } from '../wire';
import { type ChunkBatch, chunkBatches } from '../streaming/chunk-batch';
import { carriesContent } from '../streaming/stream-assembly';
import type { EmbeddingAttempt, LlmProvider, ProviderAttempt, ProviderTarget } from './llm-provider';
import { openAiEmbed } from './openai-embeddings';
import { readOpenAiAnswer } from './openai-answer';
import { readOpenAiChunk } from './openai-chunk';
import { openAiRequest } from './openai-request';
import { streamCutError } from './provider-errors';
import { nativeResponsesBody, responsesPassThrough } from './responses-pass-through';
import { readResponsesAnswer } from './responses-pass-through-answer';
import { responsesChunks } from './responses-to-chat-stream';
import { endpointUrl, postJson, postStream, providerEvents } from './provider-exchange';
import { providerEventBatches } from './provider-events';

/** @default base URL of an `openai` target without its own. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * Any OpenAI-compatible Chat Completions endpoint (OpenAI, Azure-style proxies, vLLM, Ollama,
 * llama.cpp): the request goes as the client sent it, fields Bulkhead does not know included,
 * but for the output cap, in the one field the target takes, and what a reasoning model refuses
 * (`openAiRequest`); the answer comes back as given. Only the target's key is sent, and only if it has one.
 * A Responses request to a target that serves the Responses API goes there instead, as it came
 * (`responses-pass-through.ts`), whole or streamed.
 */
export class OpenAiProvider implements LlmProvider {
  readonly name = 'openai';

  constructor(private readonly clock: Clock) {}

  async complete(attempt: ProviderAttempt): Promise<ChatCompletion> {
    const { target } = attempt;
    const native = responsesPassThrough(attempt, OPENAI_BASE_URL);
    if (native) return this.completeNatively(attempt, native);
    const url = endpointUrl(target.baseUrl ?? OPENAI_BASE_URL, 'chat/completions');
    const answer = await postJson(
      attempt,
      url,
      headersOf(target, 'application/json'),
      wireRequest(openAiRequest(attempt)),
      this.clock,
    );
    return readOpenAiAnswer(target, answer, this.clock.wallNow());
  }

  /**
   * A Responses request to a target that serves the Responses API: `POST /responses` with the
   * client's body as it came (`responses-pass-through.ts`), the answer read in one place
   * (`responses-pass-through-answer.ts`) and kept as it came beside its chat completion.
   */
  private async completeNatively(attempt: ProviderAttempt, native: PassThroughRequest): Promise<ChatCompletion> {
    const { target } = attempt;
    const answer = await postJson(
      attempt,
      endpointUrl(target.baseUrl ?? OPENAI_BASE_URL, 'responses'),
      headersOf(target, 'application/json'),
      nativeResponsesBody(attempt, native, false),
      this.clock,
    );
    return readResponsesAnswer(target, answer, this.clock.wallNow());
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
    const native = responsesPassThrough(attempt, OPENAI_BASE_URL);
    if (native) {
      yield* chunkBatches(this.streamNatively(attempt, native));
      return;
    }
    const url = endpointUrl(target.baseUrl ?? OPENAI_BASE_URL, 'chat/completions');
    const body = await postStream(
      attempt,
      url,
      headersOf(target, 'text/event-stream'),
      streamRequest(openAiRequest(attempt)),
      this.clock,
    );
    let contentSeen = false;
    for await (const events of providerEventBatches(attempt, body)) {
      // One read is one moment: the wall clock is read once for its chunks (a chunk without
      // `created` gets it), not once per chunk.
      const wallNowMs = this.clock.wallNow();
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
          ({ chunk, asGiven } = readOpenAiChunk(target, data, wallNowMs));
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

  /**
   * A streamed Responses request to a target that serves the Responses API: `POST /responses`
   * with `stream: true`, its typed events read and checked in one place
   * (`responses-to-chat-stream.ts`), each passed on to the client as it came.
   */
  private async *streamNatively(attempt: ProviderAttempt, native: PassThroughRequest): AsyncGenerator<ChatChunk> {
    const { target } = attempt;
    const body = await postStream(
      attempt,
      endpointUrl(target.baseUrl ?? OPENAI_BASE_URL, 'responses'),
      headersOf(target, 'text/event-stream'),
      nativeResponsesBody(attempt, native, true),
      this.clock,
    );
    yield* responsesChunks(providerEvents(attempt, body), target, this.clock);
  }

  /** `POST /embeddings`: the request as the client sent it, with the target's model (`openai-embeddings.ts`). */
  embed(attempt: EmbeddingAttempt): Promise<EmbeddingsAnswer> {
    const { target } = attempt;
    return openAiEmbed(this.clock, target.baseUrl ?? OPENAI_BASE_URL, headersOf(target, 'application/json'), attempt);
  }
}

export function headersOf(target: ProviderTarget, accept: string): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept };
  // `${OPENAI_API_KEY:-}` leaves an empty string when unset: a local server then gets no header.
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  return headers;
}

/** One JSON body: `stream_options` is only valid with a stream. */
function wireRequest(request: ChatRequest): ChatRequest {
  // `request` is the attempt's own (openAiRequest's): finished in place; JSON leaves out undefined.
  request.stream_options = undefined;
  request.stream = false;
  return request;
}

/** A stream that always reports its usage, in its last chunk. */
function streamRequest(request: ChatRequest): ChatRequest {
  const options =
    typeof request.stream_options === 'object' && request.stream_options !== null ? request.stream_options : {};
  request.stream = true;
  request.stream_options = { ...options, include_usage: true };
  return request;
}
