import { type Clock, isResilienceError } from '../../../common';
import type { Embedder, EmbeddingHttp } from './embedder';
import { embeddingNetworkError, embeddingStatusError, embeddingTimeoutError } from './embedding-errors';
import { embeddingsFromAnswer } from './embeddings-answer';

/** @default base URL of an `openai` embedder without its own. */
export const OPENAI_EMBEDDINGS_BASE_URL = 'https://api.openai.com/v1';

/**
 * The most one embedding's JSON may take: 16384 floats at about 16 characters each. A larger
 * answer fails (`transient`) instead of filling memory.
 */
const MAX_BYTES_PER_EMBEDDING = 256 * 1024;

export interface OpenAiEmbedderOptions {
  /** @default {@link OPENAI_EMBEDDINGS_BASE_URL} */
  baseUrl?: string;
  /** Sent as a bearer token when not empty; never logged, never in an error. */
  apiKey?: string;
  model: string;
  /** Asked of the model and required of its answer; the model's native size when left out. */
  dimensions?: number;
  /** The whole request, waiting for a pool permit included, on the clock. */
  timeoutMs: number;
}

/**
 * Any OpenAI-compatible embeddings endpoint (OpenAI, vLLM, Ollama, llama.cpp, TEI's OpenAI
 * route): `POST {baseUrl}/embeddings` with `{ model, input, encoding_format: 'float' }` through
 * the caller's pool, so the tenant's egress rules and the pool's cap apply. Vectors come back
 * L2-normalised whatever the server did.
 *
 * Failures are ResilienceErrors (see `embedding-errors.ts`): the pool's own (`egress_denied`,
 * `queue_full`) as they are, the caller's abort as its reason, `timeout` past `timeoutMs`.
 * Nothing here logs, and no error carries the texts or the key.
 */
export class OpenAiEmbedder implements Embedder {
  readonly id: string;
  private readonly url: string;
  private readonly label: string;

  constructor(
    private readonly options: OpenAiEmbedderOptions,
    private readonly clock: Clock,
  ) {
    if (!(Number.isSafeInteger(options.timeoutMs) && options.timeoutMs >= 1)) {
      throw new RangeError(`timeoutMs must be an integer of at least 1, not ${options.timeoutMs}`);
    }
    const baseUrl = (options.baseUrl ?? OPENAI_EMBEDDINGS_BASE_URL).replace(/\/+$/, '');
    this.url = `${baseUrl}/embeddings`;
    this.label = `openai/${options.model}`;
    // The base URL is in: two servers may serve different weights under one model name.
    this.id = `openai:${baseUrl}:${options.model}:${options.dimensions ?? 'native'}`;
  }

  async embed(texts: readonly string[], http: EmbeddingHttp, signal?: AbortSignal): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    if (signal?.aborted) throw signal.reason;
    const { timeoutMs } = this.options;
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = this.clock.setTimer(() => stop.abort(embeddingTimeoutError(this.label, timeoutMs)), timeoutMs, {
      unref: true,
    });
    try {
      let response;
      try {
        response = await http.request(this.url, {
          method: 'POST',
          headers: this.headers(),
          body: JSON.stringify(this.body(texts)),
          signal: stop.signal,
          maxResponseBytes: MAX_BYTES_PER_EMBEDDING * texts.length,
          timeoutMs,
        });
      } catch (error) {
        if (stop.signal.aborted) throw stop.signal.reason;
        if (isResilienceError(error)) throw error;
        throw embeddingNetworkError(this.label, error);
      }
      const { statusCode, body } = response;
      if (statusCode < 200 || statusCode >= 300) throw embeddingStatusError(this.label, statusCode);
      return embeddingsFromAnswer(body, texts.length, this.options.dimensions, this.label);
    } finally {
      this.clock.clearTimer(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    // `${OPENAI_API_KEY:-}` leaves an empty string when unset: a local server then gets no header.
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    return headers;
  }

  private body(texts: readonly string[]): Record<string, unknown> {
    const { model, dimensions } = this.options;
    return { model, input: texts, encoding_format: 'float', ...(dimensions === undefined ? {} : { dimensions }) };
  }
}
