import { z } from 'zod';

const count = z.int().min(1).max(10_000_000);

const message = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
  tool_calls: z
    .array(
      z.looseObject({
        id: z.string(),
        type: z.literal('function'),
        function: z.looseObject({ name: z.string(), arguments: z.string() }),
      }),
    )
    .optional(),
  tool_call_id: z.string().optional(),
});

/**
 * The request of `POST /v1/chat/completions`, as src/llm/chat-request.ts checks it.
 *
 * A copy, for now: that module keeps its schema to itself, and it belongs to the LLM route's
 * owners. Once it exports `chatRequestSchema`, import it here instead (a test holds the two to
 * the same answers meanwhile).
 */
export const chatRequestSchema = z
  .looseObject({
    model: z.string().min(1).max(256).meta({ description: 'A route of `llm.routes`.' }),
    messages: z.array(message).min(1),
    max_tokens: count.optional(),
    max_completion_tokens: count.optional(),
    n: z.int().min(1).max(128).optional(),
    stream: z.boolean().nullable().optional().meta({ description: 'true: the answer is `text/event-stream`.' }),
    stream_options: z
      .looseObject({ include_usage: z.boolean().optional() })
      .nullable()
      .optional()
      .meta({ description: 'Only with `stream: true`.' }),
    tools: z
      .array(z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) }))
      .optional(),
  })
  .meta({
    description:
      "OpenAI's Chat Completions request. Fields Bulkhead does not read pass through to OpenAI-compatible " +
      'targets; `service_tier` may only be `auto` or `default`.',
  });

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
