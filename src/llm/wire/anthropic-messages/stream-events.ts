import { z } from 'zod';
import { MAX_CONTENT_BLOCKS } from '../limits';
import { blockDelta, blockIndex, contentBlock, optionalText, partialUsage } from './parts';

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
