import type { Awaitable } from '../../../common';
import type { CacheableCompletion } from '../cacheable';

/** The answer of the most similar question stored, and how similar it was. */
export interface SemanticMatch {
  /** A copy of its own: no caller can change what the store holds or what another caller got. */
  completion: CacheableCompletion;
  /** Cosine similarity of the two questions' vectors, at most 1. */
  similarity: number;
}

/** What a store holds now, for gauges. */
export interface SemanticCacheUsage {
  /** Entries held, expired ones not yet dropped included. */
  entries: number;
  /** Partitions with at least one entry. */
  partitions: number;
  /** Bytes of the held answers' JSON (UTF-8) and vectors (4 bytes a dimension). */
  bytes: number;
}

/**
 * The semantic cache's answers, by partition (what must match exactly: `semanticLookupKey`)
 * and by vector (what is compared), as whole decisions, so that a shared implementation
 * (Redis with a vector index) can answer each with one command. The memory store answers at
 * once, a shared one with a promise.
 */
export interface SemanticCacheStore {
  /**
   * The answer in `partition` whose vector is most similar to `vector`, if that similarity is
   * at least `minSimilarity`; else null (none, expired, or too far). A hit counts as a use.
   */
  nearest(partition: string, vector: Float32Array, minSimilarity: number): Awaitable<SemanticMatch | null>;
  /**
   * Stores `completion` in `partition` under `questionId` for `ttlMs` milliseconds, in place of
   * what that question had; copies of `vector` and `completion` are taken at once. `ttlMs` 0
   * stores nothing and removes what was there. Throws a RangeError at once for a `ttlMs` that
   * is not a whole number of milliseconds of at least 0.
   */
  add(
    partition: string,
    questionId: string,
    vector: Float32Array,
    completion: CacheableCompletion,
    ttlMs: number,
  ): Awaitable<void>;
  /** What the store holds, or undefined where it cannot tell cheaply. */
  usage(): SemanticCacheUsage | undefined;
}

/** Injection token of the {@link SemanticCacheStore}. */
export const SemanticCacheStore = Symbol('SemanticCacheStore');
