import { z } from 'zod';

/** The request of `POST /v1/chat/completions`: the schema the route checks it with. */
export { chatRequestSchema } from '../../llm';

const toolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const finishReason = z.enum(['stop', 'length', 'tool_calls', 'content_filter']);

const usage = z.looseObject({
  prompt_tokens: z.int().min(0),
  completion_tokens: z.int().min(0),
  total_tokens: z.int().min(0),
  prompt_tokens_details: z
    .looseObject({ cached_tokens: z.int().min(0).optional(), cache_write_tokens: z.int().min(0).optional() })
    .optional(),
});

/** The `bulkhead` field of an answer: who served it and what it cost. */
export const bulkheadAnswerFieldSchema = z.strictObject({
  servedBy: z.string().meta({ description: 'The target that answered, `provider/model`.' }),
  attempts: z.int().min(0),
  fromCache: z.boolean(),
  similarity: z.number().optional().meta({ description: 'Only for a semantic cache hit.' }),
  costUsd: z.number().min(0),
  hedged: z.boolean(),
  replayed: z.boolean(),
});

/** `chat.completion` with the `bulkhead` field: the answer without `stream: true`. */
export const chatCompletionAnswerSchema = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.int().meta({ description: 'Unix seconds.' }),
  model: z.string().meta({ description: "The provider's model that served (not the route's name)." }),
  choices: z.array(
    z.looseObject({
      index: z.int().min(0),
      message: z.looseObject({
        role: z.literal('assistant'),
        content: z.string().nullable(),
        tool_calls: z.array(toolCall).optional(),
        refusal: z.string().nullable().optional(),
      }),
      finish_reason: finishReason,
      logprobs: z.null(),
    }),
  ),
  usage,
  bulkhead: bulkheadAnswerFieldSchema,
});

/**
 * One `data:` event of a streamed answer. The usage chunk (with `stream_options.include_usage`)
 * comes last, with no choices, `usage`, and the `bulkhead` field.
 */
export const chatCompletionChunkSchema = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.int(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.int().min(0),
      delta: z.looseObject({
        role: z.literal('assistant').optional(),
        content: z.string().nullable().optional(),
        refusal: z.string().nullable().optional(),
        tool_calls: z
          .array(
            z.looseObject({
              index: z.int().min(0),
              id: z.string().optional(),
              type: z.literal('function').optional(),
              function: z.looseObject({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
            }),
          )
          .optional(),
      }),
      finish_reason: finishReason.nullable(),
      logprobs: z.null(),
    }),
  ),
  usage: usage.nullable().optional(),
  bulkhead: bulkheadAnswerFieldSchema.partial().optional(),
});

/** The stream itself: `data: <chunk JSON>` events, then `data: [DONE]`, or one `data: {"error": ...}` event. */
export const chatCompletionStreamSchema = z.string().meta({
  description:
    'Server-sent events: `data: <ChatCompletionChunk JSON>` in order, then `data: [DONE]` when the answer is ' +
    'whole. A failure after the first event is one `data: {"error": {...}}` event (the error envelope with ' +
    "OpenAI's fields) and the end of the response, without `[DONE]`.",
});
