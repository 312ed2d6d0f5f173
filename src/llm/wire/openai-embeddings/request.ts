import { z } from 'zod';

/*
 * OpenAI's embeddings request as a client sends it: the schema the `/v1/embeddings` route reads
 * a body with (compiled). The answer an upstream sends back is `./answer.ts`.
 */

/** OpenAI's own limit on the inputs of one request; the answer reader sizes nothing past it. */
export const MAX_EMBEDDING_INPUTS = 2048;
/**
 * The most dimensions a vector may have: OpenAI's largest model has 3,072, Titan v2 1,024,
 * Cohere 1,536. Above any model's, far below what could make an answer hold the process.
 */
export const MAX_EMBEDDING_DIMENSIONS = 16_384;

/** A token id of a tokenizer's vocabulary (o200k has 200k; 2^31 leaves room for any). */
const tokenId = z
  .int()
  .min(0)
  .max(2 ** 31 - 1);
const tokens = z.array(tokenId).min(1);

/**
 * The embeddings body, checked where Bulkhead acts on it (the route, what is counted and priced,
 * what decides the answer's shape); other fields pass through to OpenAI-compatible targets.
 */
export const embeddingsRequestSchema = z
  .looseObject({
    model: z.string().min(1).max(256).meta({ description: 'A route of `llm.routes` whose targets embed.' }),
    input: z.union([
      z.string(),
      z.array(z.string()).min(1).max(MAX_EMBEDDING_INPUTS),
      tokens,
      z.array(tokens).min(1).max(MAX_EMBEDDING_INPUTS),
    ]),
    dimensions: z.int().min(1).max(MAX_EMBEDDING_DIMENSIONS).optional(),
    encoding_format: z.enum(['float', 'base64']).optional(),
    user: z.string().max(256).optional(),
  })
  .meta({
    description:
      "OpenAI's embeddings request: a string, an array of strings, one token array or an array of them. " +
      'Fields Bulkhead does not read pass through to OpenAI-compatible targets.',
  });

/** An embeddings request as the route runs it. */
export type EmbeddingsRequest = z.output<typeof embeddingsRequestSchema>;

/** One input of a request: a text, or the token ids of one. */
export type EmbeddingInput = string | number[];

/**
 * The request's inputs, one per vector the answer must hold: a string or one token array is
 * one input, an array of them is each.
 */
export function embeddingInputs(request: Pick<EmbeddingsRequest, 'input'>): EmbeddingInput[] {
  const { input } = request;
  if (typeof input === 'string') return [input];
  if (input.length > 0 && typeof input[0] === 'number') return [input as number[]];
  return input as EmbeddingInput[];
}
