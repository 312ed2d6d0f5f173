import { z } from 'zod';
import { compileBodyParser, ResilienceError } from '../common';
import type { ChatRequest } from './chat.types';

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

const parseChatBody = compileBodyParser(chatRequestSchema);

/** The request as the route reads it, or `invalid_request` naming the first field that is wrong. */
export function parseChatRequest(body: unknown): ChatRequest {
  const request = parseChatBody(body) as ChatRequest;
  if (request.service_tier !== undefined && request.service_tier !== 'auto' && request.service_tier !== 'default') {
    // Other tiers bill at other rates than the price table's: a reservation could not hold them.
    throw new ResilienceError('invalid_request', 'service_tier: only auto or default is supported');
  }
  if (request.stream_options != null && request.stream !== true) {
    // As OpenAI answers it: the options describe a stream.
    throw new ResilienceError('invalid_request', 'stream_options: only allowed when stream is true');
  }
  return request;
}
