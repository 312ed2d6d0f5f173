import { z } from 'zod';
import { MAX_RESPONSE_OUTPUT_ITEMS, openAiResponsesAnswer } from './upstream-answer';

/*
 * OpenAI's Responses stream as a target sends it (an `openai` target with `responsesApi`, asked
 * with `stream: true`): each event's fields that the native pass-through reads, with their types
 * and bounds, checked before anything reads them. Loose: what is not read passes on to the
 * client as it came, and an event type not named here passes unread.
 */

/** Where an item sits in the answer's output: a number past any answer's count is not one. */
const outputIndex = z
  .number()
  .int()
  .min(0)
  .max(MAX_RESPONSE_OUTPUT_ITEMS - 1);
/** An id as the target names its items: never longer than any id OpenAI makes. */
const itemId = z.string().max(256);
/** An output item as its `added`/`done` event says it: what kind, and a function call's name and id. */
const streamedItem = z.looseObject({
  type: z.string().max(64),
  id: itemId.optional(),
  call_id: z.string().min(1).max(256).optional(),
  name: z.string().min(1).max(256).optional(),
});
/** A delta of one item: its place, and the text it adds. */
const itemDelta = z.looseObject({ output_index: outputIndex, item_id: itemId.optional(), delta: z.string() });
/** What a failure says: its code, never its message, is read. */
const failure = z.looseObject({ code: z.string().max(128).nullable().optional() });

/** Each event type the gateway reads, by its `type`. */
export const openAiResponsesStreamEvents = {
  'response.created': z.looseObject({
    response: z.looseObject({
      id: itemId.optional(),
      model: z.string().max(256).optional(),
      created_at: z.number().optional(),
    }),
  }),
  'response.output_item.added': z.looseObject({ output_index: outputIndex, item: streamedItem }),
  'response.output_item.done': z.looseObject({ output_index: outputIndex, item: streamedItem }),
  'response.output_text.delta': itemDelta,
  'response.refusal.delta': itemDelta,
  'response.function_call_arguments.delta': itemDelta,
  'response.reasoning_summary_text.delta': itemDelta,
  'response.reasoning_text.delta': itemDelta,
  'response.completed': z.looseObject({ response: openAiResponsesAnswer }),
  'response.incomplete': z.looseObject({ response: openAiResponsesAnswer }),
  'response.failed': z.looseObject({ response: z.looseObject({ error: failure.nullable().optional() }) }),
  error: failure,
};

/** Every event's `type`: what may name an event in the stream's framing (`event: <type>`). */
export const RESPONSES_EVENT_TYPE = /^[a-z_.]{1,64}$/;
