import type { HttpPool } from '../../../containment';

/**
 * The HTTP client an embedder sends through: the tenant's pool (normal or isolated), so its
 * egress rules and concurrency cap apply to embedding requests as to any other. An `HttpPool`
 * is one; so is a tool's `ToolHttp`.
 */
export type EmbeddingHttp = Pick<HttpPool, 'request'>;

/**
 * Turns texts into unit vectors (L2 norm 1, so cosine similarity is their dot product). A vector
 * may be all zeros where a text has nothing to embed (no word at all): such a vector matches
 * nothing.
 *
 * A failure is a ResilienceError; its message never holds the texts.
 */
export interface Embedder {
  /**
   * Names the vector space: the kind, model and dimensions. Vectors of two embedders with
   * different ids are never compared (the semantic cache keys its partitions by it).
   */
  readonly id: string;
  /**
   * One vector per text, in order.
   *
   * @param http The caller's pool, for an embedder that calls a model (unused by one that does not).
   * @param signal Stops the work when the caller no longer needs it.
   */
  embed(texts: readonly string[], http: EmbeddingHttp, signal?: AbortSignal): Promise<Float32Array[]>;
}

/**
 * Cosine similarity of two unit vectors: their dot product, from -1 to 1 (clamped, as float32
 * rounding can pass 1 by a hair). Vectors of different lengths have none: 0.
 */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  for (let index = 0; index < a.length; index++) dot += a[index] * b[index];
  return Math.max(-1, Math.min(1, dot));
}

/** `vector` scaled in place to an L2 norm of 1, and returned; an all-zero vector stays as it is. */
export function normalised(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let index = 0; index < vector.length; index++) sum += vector[index] * vector[index];
  if (sum === 0) return vector;
  const norm = Math.sqrt(sum);
  for (let index = 0; index < vector.length; index++) vector[index] /= norm;
  return vector;
}

/** Whether a vector has nothing in it (a text with no words): it can match nothing. */
export function isZeroVector(vector: Float32Array): boolean {
  for (let index = 0; index < vector.length; index++) if (vector[index] !== 0) return false;
  return true;
}
