import { z } from 'zod';
import { MAX_CONTENT_BLOCKS, MAX_TOOL_CALLS } from '../limits';
import { tokenCount } from '../token-count';

/*
 * OpenAI's Responses answer as a target sends it (an `openai` target with `responsesApi`): what
 * the native pass-through reads of an upstream `response` object before anything else touches it.
 * Loose: items and fields Bulkhead does not read pass on to the client as they came.
 */

/** Output items one answer may hold: reasoning, messages and function calls together. */
export const MAX_RESPONSE_OUTPUT_ITEMS = MAX_CONTENT_BLOCKS + MAX_TOOL_CALLS;

const outputText = z.looseObject({ type: z.literal('output_text'), text: z.string() });
const refusal = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

const messageItem = z.looseObject({
  type: z.literal('message'),
  role: z.literal('assistant'),
  content: z.array(z.union([outputText, refusal])).max(MAX_CONTENT_BLOCKS),
});
const functionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1).max(256),
  name: z.string().min(1).max(256),
  arguments: z.string(),
});
/** The model's reasoning: its summary, and (asked for with `include`) its `encrypted_content`. */
const reasoningItem = z.looseObject({
  type: z.literal('reasoning'),
  encrypted_content: z.string().nullable().optional(),
  summary: z
    .array(z.looseObject({ type: z.string(), text: z.string() }))
    .max(MAX_CONTENT_BLOCKS)
    .optional(),
});

const usage = z.looseObject({
  input_tokens: tokenCount,
  output_tokens: tokenCount,
  total_tokens: tokenCount.optional(),
  input_tokens_details: z.looseObject({ cached_tokens: tokenCount.optional() }).nullable().optional(),
  output_tokens_details: z.looseObject({ reasoning_tokens: tokenCount.optional() }).nullable().optional(),
});

/** A whole `response` object from a target; its model and time may be missing (filled in). */
export const openAiResponsesAnswer = z.looseObject({
  id: z.string().max(256).optional(),
  object: z.literal('response').optional(),
  created_at: z.number().optional(),
  model: z.string().max(256).optional(),
  status: z.enum(['completed', 'incomplete']),
  incomplete_details: z
    .looseObject({ reason: z.string().max(64).optional() })
    .nullable()
    .optional(),
  output: z.array(z.union([messageItem, functionCallItem, reasoningItem])).max(MAX_RESPONSE_OUTPUT_ITEMS),
  usage,
});

export type OpenAiResponsesAnswer = z.infer<typeof openAiResponsesAnswer>;
