import { z } from 'zod';
import { bulkheadAnswerFieldSchema } from './chat.schemas';
import { ALL_ERROR_KINDS } from './error-envelope.schema';

const tokens = z.int().min(0);

/** Anthropic's `message` answer, as `POST /v1/messages` gives it. */
export const messagesAnswerSchema = z.looseObject({
  id: z.string().meta({ description: '`msg_…`.' }),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string().meta({ description: "The target's model that served." }),
  content: z.array(
    z.discriminatedUnion('type', [
      z.strictObject({ type: z.literal('text'), text: z.string() }),
      z.strictObject({
        type: z.literal('tool_use'),
        id: z.string(),
        name: z.string(),
        input: z.record(z.string(), z.unknown()),
      }),
    ]),
  ),
  stop_reason: z.enum(['end_turn', 'max_tokens', 'tool_use', 'refusal']),
  stop_sequence: z.null(),
  usage: z.strictObject({
    input_tokens: tokens,
    output_tokens: tokens,
    cache_read_input_tokens: tokens,
    cache_creation_input_tokens: tokens,
  }),
  bulkhead: bulkheadAnswerFieldSchema,
});

/** `POST /v1/messages/count_tokens`. */
export const messageTokensCountSchema = z.strictObject({
  input_tokens: tokens.meta({ description: "Bulkhead's estimate, the one its rate limits and budgets hold." }),
});

/** The stream: Anthropic's named events. */
export const messagesStreamSchema = z.string().meta({
  description:
    'Server-sent events, named as Anthropic names them: `message_start`, `ping`, then each content block as ' +
    '`content_block_start`, its `content_block_delta` events (`text_delta`, `input_json_delta`) and ' +
    '`content_block_stop`, then `message_delta` (the stop reason, the usage and the `bulkhead` field) and ' +
    '`message_stop`. A failure after the first event is one `error` event and the end of the response.',
});

/** A failure in Anthropic's shape, with the envelope's own fields inside `error`. */
export const anthropicErrorSchema = z.strictObject({
  type: z.literal('error'),
  error: z.strictObject({
    type: z.enum([
      'invalid_request_error',
      'authentication_error',
      'billing_error',
      'permission_error',
      'not_found_error',
      'rate_limit_error',
      'api_error',
      'timeout_error',
      'overloaded_error',
    ]),
    kind: z.enum(ALL_ERROR_KINDS as [string, ...string[]]),
    message: z.string(),
    attempts: z.int().min(0),
    jsonrpcCode: z.int(),
    retryAfterMs: z.number().min(0).optional(),
  }),
  callId: z.string().optional(),
  toolId: z.string().optional(),
});
