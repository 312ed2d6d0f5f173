import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';

/*
 * Bedrock's CountTokens (`POST /model/{modelId}/count-tokens`), as far as Bulkhead reads it: the
 * count it answers, and the refusal of a model that has no CountTokens.
 */

/**
 * The most input tokens a count may say: the largest context window a target may be configured
 * with (`llm.routes.*.targets[].contextWindow`). A count past it is no count of a prompt.
 */
export const MAX_COUNTED_INPUT_TOKENS = 100_000_000;

/** `{"inputTokens": 17}`; AWS may add fields, which are not read. */
const countTokensAnswer = z.looseObject({
  inputTokens: z.number().int().min(0).max(MAX_COUNTED_INPUT_TOKENS),
});

/** The input tokens of a CountTokens answer, or undefined when the body is not one. */
export function countedInputTokens(body: unknown): number | undefined {
  const parsed = countTokensAnswer.safeParse(body);
  return parsed.success ? parsed.data.inputTokens : undefined;
}

/** AWS's JSON error body: `{"message": "..."}` (some services write `Message`). */
const awsErrorBody = z.looseObject({ message: z.string().optional(), Message: z.string().optional() });

/** What Bedrock says of a model without CountTokens: "The provided model doesn't support counting tokens." */
const NO_COUNT_MESSAGE = /does(?:n't| not) support counting tokens/i;

/**
 * Whether an answer of CountTokens is Bedrock's refusal of a model that has no CountTokens:
 * 400, `x-amzn-errortype: ValidationException`, and the message that says so. Any other 400
 * (a prompt too long to count, a body it refuses) is about this request, not the model. The
 * message is read to decide, never repeated.
 */
export function refusesCountingTokens(status: number, headers: IncomingHttpHeaders, body: unknown): boolean {
  if (status !== 400) return false;
  const type = headers['x-amzn-errortype'];
  if (typeof type !== 'string' || !type.startsWith('ValidationException')) return false;
  const parsed = awsErrorBody.safeParse(body);
  const message = parsed.success ? (parsed.data.message ?? parsed.data.Message) : undefined;
  return message !== undefined && NO_COUNT_MESSAGE.test(message.slice(0, 200));
}
