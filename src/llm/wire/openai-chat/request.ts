import { z } from 'zod';

/*
 * OpenAI's Chat Completions request as a client sends it: the schema the chat route reads a body
 * with (compiled), which the OpenAPI document shows. The answer and the chunks an upstream sends
 * back are `./schemas.ts`; the types the pipeline runs on are `chat.types.ts`.
 */

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
 * The OpenAI Chat Completions body, checked where Bulkhead acts on it; other fields pass through
 * to OpenAI-compatible targets (and are refused by the translating providers where they matter).
 * The OpenAPI document describes the route with this same schema.
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
