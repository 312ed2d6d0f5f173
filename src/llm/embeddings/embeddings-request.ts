import { compileBodyParser } from '../../common';
import { type EmbeddingInput, embeddingInputs, type EmbeddingsRequest, embeddingsRequestSchema } from '../wire';

const parseEmbeddingsBody = compileBodyParser(embeddingsRequestSchema);

/**
 * Tokens a provider may add to each input beyond its text: a tokenizer's start and end markers
 * (BERT-style models such as Cohere's add two), with room to spare.
 */
export const EMBEDDING_INPUT_OVERHEAD_TOKENS = 4;

/** The request as the route reads it, or `invalid_request` naming the first field that is wrong. */
export function parseEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  return parseEmbeddingsBody(body);
}

/**
 * An upper bound of the tokens a provider counts for `inputs`, as chat's estimate bounds a prompt:
 * a text counts its UTF-8 bytes (byte-level BPE never spends more than a token per byte), a token
 * array its length, each input the overhead above. What the rate limit takes and the budget holds
 * at the target's input price; the provider's own count is charged within it.
 */
export function estimateEmbeddingTokens(inputs: readonly EmbeddingInput[]): number {
  let tokens = 0;
  for (const input of inputs) {
    tokens +=
      (typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.length) + EMBEDDING_INPUT_OVERHEAD_TOKENS;
  }
  return tokens;
}

export { embeddingInputs };
