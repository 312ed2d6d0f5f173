import type { Clock } from '../../common';
import { embeddingInputs, type EmbeddingsAnswer, readEmbeddingsAnswer } from '../wire';
import type { EmbeddingAttempt } from './llm-provider';
import { malformedAnswerError } from './provider-errors';
import { endpointUrl, postJson } from './provider-exchange';

/**
 * Bytes one vector may take in an answer: 16,384 dimensions of JSON floats at 24 characters
 * each (`-0.0012345678901234567,`), which base64 (under 6 per dimension) stays far below.
 */
const MAX_BYTES_PER_VECTOR = 16_384 * 24;
/** Room for the answer's frame: its usage, model and per-vector fields. */
const ANSWER_FRAME_BYTES = 64 * 1024;

/**
 * The most an embeddings answer for `inputs` inputs may be: what their largest vectors could
 * take, so a model server cannot make the process hold more than the request could need.
 */
export function maxEmbeddingsAnswerBytes(inputs: number): number {
  return ANSWER_FRAME_BYTES + inputs * MAX_BYTES_PER_VECTOR;
}

/**
 * `POST {baseUrl}/embeddings` of an OpenAI-compatible target: the client's request as it came
 * (dimensions, encoding_format, user and fields Bulkhead does not know included) with the
 * target's model, and the answer as given once the wire's reader took it for that request.
 */
export async function openAiEmbed(
  clock: Clock,
  baseUrl: string,
  headers: Record<string, string>,
  attempt: EmbeddingAttempt,
): Promise<EmbeddingsAnswer> {
  const { target, request } = attempt;
  const inputs = embeddingInputs(request).length;
  const url = endpointUrl(baseUrl, 'embeddings');
  const answer = await postJson(attempt, url, headers, request, clock, {
    maxResponseBytes: maxEmbeddingsAnswerBytes(inputs),
  });
  const read = readEmbeddingsAnswer(
    answer,
    { inputs, encoding: request.encoding_format ?? 'float', dimensions: request.dimensions },
    target.model,
  );
  if (!read) throw malformedAnswerError(target, 200);
  return read;
}
