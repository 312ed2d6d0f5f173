import { isPromiseLike } from '../../../common';
import type { ChatCompletion, ChatRequest } from '../../chat.types';
import { isCacheable } from '../cacheable';
import { type Embedder, type EmbeddingHttp, isZeroVector } from './embedder';
import type { SemanticCacheStore, SemanticMatch } from './semantic-cache.store';
import { isSemanticCacheable } from './semantic-cacheable';
import { type SemanticLookupKey, semanticLookupKey } from './semantic-key';

/**
 * How far below the threshold a similarity may be and still count: vectors are float32, so the
 * same text compared with itself can come out at 0.99999994, and a threshold of 1 must still hit.
 */
const FLOAT32_TOLERANCE = 1e-6;

export interface SemanticCacheOptions {
  /** Off: every lookup misses and nothing is stored. */
  enabled: boolean;
  /** Cosine similarity a hit needs, above 0 and at most 1. */
  threshold: number;
  /** How long an answer is served, in ms; 0 stores nothing. */
  ttlMs: number;
}

/** Which step of the semantic cache failed. */
export type SemanticCacheOperation = 'find' | 'remember';

type ErrorListener = (error: unknown, operation: SemanticCacheOperation) => void;

/** The vector of the last request looked up, kept so that storing its answer embeds nothing again. */
interface Embedded {
  readonly key: SemanticLookupKey;
  readonly vector: Float32Array;
}

/**
 * The opt-in semantic cache of the LLM route: a question whose context and parameters are exactly
 * those of one answered before (the same tenant, route, embedder and request but the last
 * message's text: `semanticLookupKey`), and whose last message is at least `threshold` similar,
 * gets that answer.
 *
 * It serves one question's answer to another question: "capital of France?" may get the answer
 * stored for "the capital of France?", and, with a loose threshold or a lexical embedder, for
 * "capital of Spain?". That is why it is off by default, opt-in per route, and only for plain
 * questions ({@link isSemanticCacheable}: no tools, no response format, one choice, no logprobs).
 *
 * It never fails a request: a lookup that cannot be made (the embedder is down or slow, the
 * store throws) is a miss, and an answer that cannot be stored is dropped; each is reported once
 * to {@link onError} (no log line here, and nothing that holds the text).
 */
export class SemanticCache {
  readonly enabled: boolean;
  readonly threshold: number;
  readonly ttlMs: number;
  /** The embedder's `id`: which vector space answers are compared in. */
  readonly embedderId: string;
  private errorListeners: ErrorListener[] = [];
  /** Keyed by the request object: it goes when the request does. */
  private readonly embedded = new WeakMap<ChatRequest, Embedded>();

  constructor(
    private readonly store: SemanticCacheStore,
    private readonly embedder: Embedder,
    options: SemanticCacheOptions,
  ) {
    if (!(typeof options.threshold === 'number' && options.threshold > 0 && options.threshold <= 1)) {
      throw new RangeError(`threshold must be a number above 0 and at most 1, not ${options.threshold}`);
    }
    if (!(Number.isSafeInteger(options.ttlMs) && options.ttlMs >= 0)) {
      throw new RangeError(`ttlMs must be a whole number of milliseconds of at least 0, not ${options.ttlMs}`);
    }
    this.enabled = options.enabled;
    this.threshold = options.threshold;
    this.ttlMs = options.ttlMs;
    this.embedderId = embedder.id;
  }

  /**
   * The stored answer of the most similar question, or null: disabled, a request the cache does
   * not take, no answer close enough, or a lookup that failed. Never rejects.
   *
   * @param tenant The caller's tenant: answers are never shared between tenants.
   * @param scope The route's `cacheScope` (`routeCacheScope`).
   * @param http The tenant's pool, for an embedder that calls a model.
   * @param signal The call's: a client that leaves stops the embedding request (a miss).
   */
  async find(
    tenant: string,
    scope: string,
    request: ChatRequest,
    http: EmbeddingHttp,
    signal?: AbortSignal,
  ): Promise<SemanticMatch | null> {
    if (!this.enabled || !isSemanticCacheable(request)) return null;
    try {
      const { key, vector } = await this.embed(tenant, scope, request, http, signal);
      if (isZeroVector(vector)) return null;
      const found = this.store.nearest(key.partition, vector, this.threshold - FLOAT32_TOLERANCE);
      return isPromiseLike(found) ? await found : found;
    } catch (error) {
      // A client that left is no failure of the cache.
      if (!signal?.aborted) this.report(error, 'find');
      return null;
    }
  }

  /**
   * Stores `completion` as the answer to `request` when both qualify: the request is a plain
   * question and the answer is clean text (`isCacheable`). Embeds nothing again when `find`
   * was asked about the same request object. Resolves to whether it was stored; never rejects.
   */
  async remember(
    tenant: string,
    scope: string,
    request: ChatRequest,
    completion: ChatCompletion,
    http: EmbeddingHttp,
    signal?: AbortSignal,
  ): Promise<boolean> {
    if (!this.enabled || this.ttlMs === 0 || !isSemanticCacheable(request)) return false;
    if (!isCacheable(completion, request)) return false;
    try {
      const { key, vector } = await this.embed(tenant, scope, request, http, signal);
      if (isZeroVector(vector)) return false;
      const stored = this.store.add(key.partition, key.questionId, vector, completion, this.ttlMs);
      if (isPromiseLike(stored)) await stored;
      return true;
    } catch (error) {
      if (!signal?.aborted) this.report(error, 'remember');
      return false;
    }
  }

  /** Calls `listener` for each lookup or store that failed; returns its remover. */
  onError(listener: ErrorListener): () => void {
    this.errorListeners.push(listener);
    return () => {
      this.errorListeners = this.errorListeners.filter((other) => other !== listener);
    };
  }

  private async embed(
    tenant: string,
    scope: string,
    request: ChatRequest,
    http: EmbeddingHttp,
    signal: AbortSignal | undefined,
  ): Promise<Embedded> {
    const key = semanticLookupKey(tenant, scope, request, this.embedder.id);
    const known = this.embedded.get(request);
    // The same object may have changed since, or be asked about for another tenant or route.
    if (known && known.key.partition === key.partition && known.key.question === key.question) return known;
    const [vector] = await this.embedder.embed([key.question], http, signal);
    if (!(vector instanceof Float32Array)) throw new TypeError(`embedder ${this.embedder.id} gave no vector`);
    const embedded = { key, vector };
    this.embedded.set(request, embedded);
    return embedded;
  }

  private report(error: unknown, operation: SemanticCacheOperation): void {
    for (const listener of this.errorListeners) {
      try {
        listener(error, operation);
      } catch {
        // A listener that throws must not turn a miss into a failed request.
      }
    }
  }
}
