import { z } from 'zod';
import { MAX_CONTENT_BLOCKS } from '../limits';
import { tokenCount } from '../token-count';

/*
 * Anthropic's Messages API as an upstream answers it (Anthropic itself, or Bedrock, whose events
 * are Anthropic's): the fields the gateway reads, each with the type it relies on; everything
 * else passes as given, since Anthropic adds fields and block types.
 */

export const blockIndex = z
  .number()
  .int()
  .min(0)
  .max(MAX_CONTENT_BLOCKS - 1);
export const optionalText = z.string().optional();
export const optionalCount = tokenCount.nullable().optional();

/** Usage as a message or a `message_delta` states it; a stream's events may each carry some of it. */
export const partialUsage = z.looseObject({
  input_tokens: optionalCount,
  output_tokens: optionalCount,
  cache_read_input_tokens: optionalCount,
  cache_creation_input_tokens: optionalCount,
});

/** A content block as an answer or a block's start gives it: which fields its kind reads are text. */
export const contentBlock = z.looseObject({
  type: z.string(),
  text: optionalText,
  id: optionalText,
  name: optionalText,
  thinking: optionalText,
  signature: optionalText,
});

export const blockDelta = z.looseObject({
  type: z.string(),
  text: optionalText,
  partial_json: optionalText,
  thinking: optionalText,
  signature: optionalText,
});
