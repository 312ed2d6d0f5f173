import { createHash } from 'node:crypto';
import { embeddingInputs, type EmbeddingsAnswer } from '../wire';
import type { EmbeddingAttempt } from './llm-provider';

/** Dimensions of a fake vector when the request asks for none. */
export const FAKE_EMBEDDING_DIMENSIONS = 8;
/** Characters per estimated token, as the fake's chat answers count them. */
const CHARS_PER_TOKEN = 4;

/**
 * The fake provider's embeddings, offline: each input's vector from the SHA-256 of its text (or
 * token ids), so the same input always has the same vector and two inputs almost never share one;
 * each component a multiple of 1/128 in [-1, 1), exact in float32 (base64 gives them back as
 * they are). Usage: ceil(characters / 4) per text, the length of a token array.
 */
export function fakeEmbed(attempt: EmbeddingAttempt): EmbeddingsAnswer {
  const { request, target } = attempt;
  const dimensions = request.dimensions ?? FAKE_EMBEDDING_DIMENSIONS;
  let tokens = 0;
  const data = embeddingInputs(request).map((input, index) => {
    const text = typeof input === 'string' ? input : input.join(',');
    tokens += typeof input === 'string' ? Math.ceil(input.length / CHARS_PER_TOKEN) : input.length;
    const vector = vectorOf(text, dimensions);
    return {
      object: 'embedding' as const,
      index,
      embedding:
        request.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
    };
  });
  return { object: 'list', data, model: target.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

function vectorOf(text: string, dimensions: number): number[] {
  const vector: number[] = [];
  let digest = Buffer.alloc(0);
  while (vector.length < dimensions) {
    // 32 bytes a digest: the next 32 components from the next one.
    if (vector.length % 32 === 0)
      digest = createHash('sha256')
        .update(`${vector.length / 32}:${text}`)
        .digest();
    vector.push((digest[vector.length % 32] - 128) / 128);
  }
  return vector;
}
