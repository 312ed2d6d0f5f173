import { type Clock, ResilienceError } from '../../common';
import {
  bedrockEmbeddingFamily,
  COHERE_TEXTS_PER_CALL,
  cohereEmbeddingBody,
  embeddingInputs,
  type EmbeddingsAnswer,
  type EmbeddingVector,
  readCohereEmbeddings,
  readTitanEmbedding,
  titanEmbeddingBody,
} from '../wire';
import { awsSigningMaterial, type Environment } from './bedrock-credentials';
import { bedrockInvokeUrl, signedBedrockHeaders } from './bedrock-request';
import type { EmbeddingAttempt } from './llm-provider';
import { maxEmbeddingsAnswerBytes } from './openai-embeddings';
import { malformedAnswerError } from './provider-errors';
import { postJsonAnswer } from './provider-exchange';

/** The header Bedrock counts a call's input tokens in (Cohere's answer has no count of its own). */
const INPUT_TOKEN_COUNT_HEADER = 'x-amzn-bedrock-input-token-count';

/**
 * Embeddings from a Bedrock model through InvokeModel, in OpenAI's shape: Titan one text a call,
 * Cohere up to 96, the calls one after another inside the attempt (its timeout bounds them all).
 * Texts only: a token array is OpenAI's tokenizer's, which neither model reads. The vectors come
 * as floats; `encoding_format: base64` is answered as OpenAI does, Bulkhead encoding the floats
 * as little-endian float32s (the openai SDK asks for base64 by default).
 */
export async function bedrockEmbed(
  clock: Clock,
  env: Environment,
  attempt: EmbeddingAttempt,
): Promise<EmbeddingsAnswer> {
  const { target, request } = attempt;
  const family = bedrockEmbeddingFamily(target.model);
  if (!family) {
    throw new ResilienceError(
      'invalid_request',
      `target ${target.provider}/${target.model} is not an embeddings model`,
    );
  }
  const texts = embeddingInputs(request).map((input) => {
    if (typeof input !== 'string') {
      throw new ResilienceError('invalid_request', `target ${target.provider}/${target.model} takes text, not tokens`);
    }
    return input;
  });
  const invoke = async (body: Record<string, unknown>, vectors: number) => {
    const material = awsSigningMaterial(target, env);
    const url = bedrockInvokeUrl(target, material.region, 'invoke');
    const headers = signedBedrockHeaders(url, JSON.stringify(body), material, clock.wallNow(), 'invoke');
    return postJsonAnswer(attempt, url, headers, body, clock, { maxResponseBytes: maxEmbeddingsAnswerBytes(vectors) });
  };
  const vectors: number[][] = [];
  let tokens = 0;
  if (family === 'titan') {
    for (const text of texts) {
      const { body } = await invoke(titanEmbeddingBody(text, request.dimensions), 1);
      const read = readTitanEmbedding(body, request.dimensions);
      if (!read) throw malformedAnswerError(target, 200);
      vectors.push(read.vector);
      tokens += read.tokens;
    }
  } else {
    const inputType = typeof request.input_type === 'string' ? request.input_type : undefined;
    for (let at = 0; at < texts.length; at += COHERE_TEXTS_PER_CALL) {
      const batch = texts.slice(at, at + COHERE_TEXTS_PER_CALL);
      const { body, headers } = await invoke(cohereEmbeddingBody(batch, inputType, request.dimensions), batch.length);
      const read = readCohereEmbeddings(body, batch.length, request.dimensions);
      if (!read) throw malformedAnswerError(target, 200);
      vectors.push(...read);
      // A count Bedrock did not give is not a count: the account then charges what it held.
      tokens += Number(headers[INPUT_TOKEN_COUNT_HEADER] ?? Number.NaN);
    }
  }
  const base64 = request.encoding_format === 'base64';
  return {
    object: 'list',
    model: target.model,
    data: vectors.map((vector, index): EmbeddingVector => ({
      object: 'embedding',
      index,
      embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
    })),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
