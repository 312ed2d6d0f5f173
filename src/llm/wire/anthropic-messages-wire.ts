import { z } from 'zod';
import { MAX_CONTENT_BLOCKS } from './limits';
import { tokenCount } from './token-count';

/*
 * Anthropic's Messages API as an upstream answers it (Anthropic itself, or Bedrock, whose events
 * are Anthropic's): the fields the gateway reads, each with the type it relies on; everything
 * else passes as given, since Anthropic adds fields and block types.
 */

const blockIndex = z
  .number()
  .int()
  .min(0)
  .max(MAX_CONTENT_BLOCKS - 1);
const optionalText = z.string().optional();
const optionalCount = tokenCount.nullable().optional();

/** Usage as a message or a `message_delta` states it; a stream's events may each carry some of it. */
const partialUsage = z.looseObject({
  input_tokens: optionalCount,
  output_tokens: optionalCount,
  cache_read_input_tokens: optionalCount,
  cache_creation_input_tokens: optionalCount,
});

/** A content block as an answer or a block's start gives it: which fields its kind reads are text. */
const contentBlock = z.looseObject({
  type: z.string(),
  text: optionalText,
  id: optionalText,
  name: optionalText,
  thinking: optionalText,
  signature: optionalText,
});

const blockDelta = z.looseObject({
  type: z.string(),
  text: optionalText,
  partial_json: optionalText,
  thinking: optionalText,
  signature: optionalText,
});

/** Each event type the gateway reads, by its `type`; a type it does not know passes unread. */
export const anthropicStreamEvents = {
  message_start: z.looseObject({
    message: z.looseObject({
      id: z.string(),
      model: optionalText,
      content: z.array(contentBlock).max(MAX_CONTENT_BLOCKS).optional(),
      usage: partialUsage.optional(),
    }),
  }),
  content_block_start: z.looseObject({ index: blockIndex, content_block: contentBlock }),
  content_block_delta: z.looseObject({ index: blockIndex, delta: blockDelta }),
  content_block_stop: z.looseObject({ index: blockIndex }),
  message_delta: z.looseObject({
    delta: z.looseObject({ stop_reason: z.string().nullable().optional() }).optional(),
    usage: partialUsage.nullable().optional(),
  }),
};

/** A whole (non-streamed) `message`: its blocks, and the two counts every answer has. */
export const anthropicAnswer = z.looseObject({
  id: z.string(),
  model: optionalText,
  content: z.array(contentBlock).max(MAX_CONTENT_BLOCKS),
  stop_reason: z.string().nullable().optional(),
  usage: partialUsage.extend({ input_tokens: tokenCount, output_tokens: tokenCount }),
});
