import { z } from 'zod';
import { compileRequestCheck } from '../../../common';
import { isIndexBelow } from '../limits';
import { tokenCount } from '../token-count';
import { MAX_EMBEDDING_DIMENSIONS, MAX_EMBEDDING_INPUTS } from './request';

/*
 * OpenAI's embeddings answer as an upstream sends it: the fields the route reads, each with the
 * type it relies on; everything else passes as given (loose objects).
 */

/** Base64 of little-endian float32s: whole groups of four characters, padding only at the end. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const embedding = z.looseObject({
  index: z.unknown().optional(),
  embedding: z.union([
    z.array(z.number()).min(1).max(MAX_EMBEDDING_DIMENSIONS),
    // Four bytes a float, four characters per three bytes.
    z
      .string()
      .min(1)
      .max(Math.ceil((MAX_EMBEDDING_DIMENSIONS * 4) / 3) + 4),
  ]),
});

/** The answer's shape, before the checks that need the request (count, indices, format). */
export const openAiEmbeddingsAnswer = z.looseObject({
  data: z.array(embedding).min(1).max(MAX_EMBEDDING_INPUTS),
  model: z.string().nullable().optional(),
  usage: z.looseObject({ prompt_tokens: tokenCount, total_tokens: tokenCount.optional() }),
});

/** The wire's check of a whole answer, compiled once. */
const isAnswerShape = compileRequestCheck(openAiEmbeddingsAnswer);

/** One vector as the client gets it: floats, or base64 of little-endian float32s as asked. */
export interface EmbeddingVector {
  object: 'embedding';
  index: number;
  embedding: number[] | string;
}

/** OpenAI's embeddings answer, as the route gives it (and every provider's `embed` answers). */
export interface EmbeddingsAnswer {
  object: 'list';
  data: EmbeddingVector[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** What the answer must match: the request it answers. */
export interface EmbeddingsExpectation {
  /** How many inputs were sent: one vector each, no more, no fewer. */
  inputs: number;
  /** `base64` when the client asked for it: strings then, else arrays of numbers. */
  encoding: 'float' | 'base64';
  /** The dimensions asked for: each vector must have that many. */
  dimensions?: number;
}

/**
 * An upstream's embeddings answer checked against the request it answers, in the inputs' order,
 * or undefined for one that is not that answer: a vector that is not numbers (or not base64 when
 * base64 was asked), a count of vectors other than the inputs', an index out of range or given
 * twice, vectors of other dimensions than asked or of sizes that differ. Usage counts pass as given: the account judges
 * them. The first place an upstream's embeddings are read; nothing else reads them raw.
 */
export function readEmbeddingsAnswer(
  answer: unknown,
  expected: EmbeddingsExpectation,
  fallbackModel: string,
): EmbeddingsAnswer | undefined {
  if (!isAnswerShape(answer) || answer.data.length !== expected.inputs) return undefined;
  const ordered: EmbeddingVector[] = new Array<EmbeddingVector>(expected.inputs);
  // Every vector of one answer is of one model and one size: the first one's.
  const length = answer.data[0].embedding.length;
  for (let at = 0; at < answer.data.length; at++) {
    const item = answer.data[at];
    // A server that leaves the index out lists the vectors in the inputs' order.
    const index = item.index === undefined ? at : item.index;
    if (!isIndexBelow(index, expected.inputs) || ordered[index] !== undefined) return undefined;
    const vector = item.embedding;
    if (vector.length !== length || !vectorFits(vector, expected)) return undefined;
    ordered[index] = { object: 'embedding', index, embedding: vector };
  }
  const { usage } = answer;
  return {
    object: 'list',
    data: ordered,
    model: typeof answer.model === 'string' ? answer.model : fallbackModel,
    usage: {
      prompt_tokens: usage.prompt_tokens,
      total_tokens: usage.total_tokens ?? usage.prompt_tokens,
    },
  };
}

function vectorFits(vector: number[] | string, expected: EmbeddingsExpectation): boolean {
  if (typeof vector === 'string') {
    if (expected.encoding !== 'base64' || vector.length % 4 !== 0 || !BASE64.test(vector)) return false;
    const bytes = (vector.length / 4) * 3 - (vector.endsWith('==') ? 2 : vector.endsWith('=') ? 1 : 0);
    return bytes % 4 === 0 && (expected.dimensions === undefined || bytes / 4 === expected.dimensions);
  }
  if (expected.encoding !== 'float') return false;
  return expected.dimensions === undefined || vector.length === expected.dimensions;
}
