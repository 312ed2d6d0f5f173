import { z } from 'zod';
import { compileRequestCheck } from '../../../common';
import { tokenCount } from '../token-count';
import { MAX_EMBEDDING_DIMENSIONS } from '../openai-embeddings/request';

/*
 * Bedrock's embeddings models through InvokeModel, whose bodies are each model's own: Amazon
 * Titan Text Embeddings (one text a call, its vector and token count back) and Cohere Embed (up
 * to 96 texts a call, their vectors back; the token count only in a header).
 */

/** Which embeddings body a Bedrock model id takes, or undefined for one that does not embed. */
export type BedrockEmbeddingFamily = 'titan' | 'cohere';

/** Cohere Embed's limit of texts per call on Bedrock. */
export const COHERE_TEXTS_PER_CALL = 96;

/**
 * The family of `model`: `amazon.titan-embed-*` and `cohere.embed-*`, also behind a region prefix
 * (`us.cohere.embed-v4:0`) or in an ARN.
 */
export function bedrockEmbeddingFamily(model: string): BedrockEmbeddingFamily | undefined {
  if (/(^|[./])amazon\.titan-embed-/.test(model)) return 'titan';
  if (/(^|[./])cohere\.embed-/.test(model)) return 'cohere';
  return undefined;
}

/** Titan's body for one text: `dimensions` as the client asked (v2 takes 256, 512, 1024). */
export function titanEmbeddingBody(text: string, dimensions: number | undefined): Record<string, unknown> {
  return dimensions === undefined ? { inputText: text } : { inputText: text, dimensions };
}

/**
 * Cohere's body for up to 96 texts, floats asked for, `dimensions` as `output_dimension`. `input_type` is Cohere's own and required:
 * the client's where it sent one (a field OpenAI does not have), `search_document` otherwise,
 * what a retrieval step stores.
 */
export function cohereEmbeddingBody(
  texts: string[],
  inputType: string | undefined,
  dimensions: number | undefined,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    texts,
    input_type: inputType ?? 'search_document',
    embedding_types: ['float'],
  };
  // Embed v4's own name for it; v3 has one size and refuses the field, as it should a size it lacks.
  if (dimensions !== undefined) body.output_dimension = dimensions;
  return body;
}

const vector = z.array(z.number()).min(1).max(MAX_EMBEDDING_DIMENSIONS);
const isTitanAnswer = compileRequestCheck(z.looseObject({ embedding: vector, inputTextTokenCount: tokenCount }));
const isCohereAnswer = compileRequestCheck(
  z.looseObject({
    embeddings: z.union([z.array(vector), z.looseObject({ float: z.array(vector) })]),
  }),
);

/** Titan's answer: its vector and token count, or undefined for one that is not (or not of `dimensions`). */
export function readTitanEmbedding(
  answer: unknown,
  dimensions: number | undefined,
): { vector: number[]; tokens: number } | undefined {
  if (!isTitanAnswer(answer)) return undefined;
  if (dimensions !== undefined && answer.embedding.length !== dimensions) return undefined;
  return { vector: answer.embedding, tokens: answer.inputTextTokenCount };
}

/**
 * Cohere's answer: one vector per text sent, in order (a bare list, or under `float` when types
 * were asked), or undefined for one that is not (another count, other dimensions than asked).
 */
export function readCohereEmbeddings(
  answer: unknown,
  texts: number,
  dimensions: number | undefined,
): number[][] | undefined {
  if (!isCohereAnswer(answer)) return undefined;
  const vectors = Array.isArray(answer.embeddings) ? answer.embeddings : answer.embeddings.float;
  if (vectors.length !== texts) return undefined;
  if (dimensions !== undefined && vectors.some((one) => one.length !== dimensions)) return undefined;
  return vectors;
}
