import { type Embedder, type EmbeddingHttp, normalised } from './embedder';

/** @default dimensions of a {@link HashingEmbedder}. */
export const DEFAULT_HASHING_DIMENSIONS = 1024;

/**
 * Words: runs of letters and digits, an apostrophe inside a word kept in it (`what's`, `l’eau`),
 * so a contraction is one word rather than a word and a stray letter.
 */
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;

/**
 * A dependency-free, offline embedder: the words of the text (NFKC, lower-cased) and its word
 * pairs (bigrams, which keep a little of the word order: "dog bites man" is not "man bites
 * dog"), each hashed to one of `dimensions` slots with a hashed sign (signed feature hashing,
 * so collisions cancel out on average instead of adding up), counted, and L2-normalised.
 *
 * It measures lexical overlap, not meaning: "What is the capital of France?" and "capital of
 * France?" are close, "Who wrote Hamlet?" and "Which author penned Hamlet?" are not, and
 * "Is it safe to take aspirin?" and "Is it safe to take ibuprofen?" are closer than they
 * should be. Use a model (`OpenAiEmbedder`) where meaning matters.
 */
export class HashingEmbedder implements Embedder {
  readonly id: string;

  constructor(readonly dimensions: number = DEFAULT_HASHING_DIMENSIONS) {
    if (!(Number.isSafeInteger(dimensions) && dimensions >= 1)) {
      throw new RangeError(`dimensions must be an integer of at least 1, not ${dimensions}`);
    }
    this.id = `hashing:v1:${dimensions}`;
  }

  /** Offline: the pool and the signal are not needed, and the vectors are ready at once. */
  embed(texts: readonly string[], _http?: EmbeddingHttp, _signal?: AbortSignal): Promise<Float32Array[]> {
    return Promise.resolve(texts.map((text) => this.embedOne(text)));
  }

  /** The vector of one text, at once. */
  embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions);
    const words = text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
    for (let index = 0; index < words.length; index++) {
      this.add(vector, words[index]);
      // A space cannot be in a word, so a pair never hashes as the same feature as a word.
      if (index > 0) this.add(vector, `${words[index - 1]} ${words[index]}`);
    }
    return normalised(vector);
  }

  private add(vector: Float32Array, feature: string): void {
    const hash = fnv1a(feature);
    // The slot and the sign from two different mixes of the hash, so they do not go together.
    vector[mix(hash) % this.dimensions] += mix(hash ^ 0x9e3779b9) & 1 ? 1 : -1;
  }
}

/** FNV-1a over the UTF-16 code units: fast, and stable across processes and versions. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** MurmurHash3's finaliser: spreads FNV's weak low bits over the whole word. */
function mix(value: number): number {
  let hash = value >>> 0;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
