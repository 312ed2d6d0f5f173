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
  input_tokens: tokens.meta({ description: "The target's own count, or Bulkhead's estimate." }),
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

/** OpenAI's Responses `response` object, as `POST /v1/responses` gives it. */
export const responseObjectSchema = z.looseObject({
  id: z.string().meta({ description: '`resp_…`.' }),
  object: z.literal('response'),
  created_at: z.int().meta({ description: 'Unix seconds.' }),
  status: z.enum(['completed', 'incomplete']),
  incomplete_details: z.strictObject({ reason: z.enum(['max_output_tokens', 'content_filter']) }).nullable(),
  model: z.string().meta({ description: "The target's model that served." }),
  output: z.array(
    z.discriminatedUnion('type', [
      z.strictObject({
        type: z.literal('message'),
        id: z.string(),
        status: z.literal('completed'),
        role: z.literal('assistant'),
        content: z.array(
          z.strictObject({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.never()) }),
        ),
      }),
      z.strictObject({
        type: z.literal('function_call'),
        id: z.string(),
        call_id: z.string(),
        name: z.string(),
        arguments: z.string(),
        status: z.literal('completed'),
      }),
    ]),
  ),
  usage: z.strictObject({
    input_tokens: tokens,
    input_tokens_details: z.strictObject({ cached_tokens: tokens }),
    output_tokens: tokens,
    output_tokens_details: z.strictObject({ reasoning_tokens: tokens }),
    total_tokens: tokens,
  }),
  store: z.boolean().meta({
    description:
      'Whether the response is kept (llm.responses.stored), for `previous_response_id` and `item_reference`.',
  }),
  previous_response_id: z.string().nullable().meta({ description: 'The kept response this one continues.' }),
  bulkhead: bulkheadAnswerFieldSchema,
});

/** The Responses stream: its typed events. */
export const responsesStreamSchema = z.string().meta({
  description:
    'Server-sent events, typed as OpenAI types them, each with its `sequence_number`: `response.created`, ' +
    '`response.in_progress`, then each output item as `response.output_item.added`, its deltas ' +
    '(`response.output_text.delta`, `response.function_call_arguments.delta`), their `.done` events and ' +
    '`response.output_item.done`, then `response.completed` (or `response.incomplete`) with the whole response. ' +
    'A failure after the first event is one `error` event and the end of the response.',
});

/** The answer of `POST /v1/embeddings`: OpenAI's list of vectors, with the `bulkhead` field. */
export const embeddingsAnswerSchema = z.looseObject({
  object: z.literal('list'),
  data: z.array(
    z.looseObject({
      object: z.literal('embedding'),
      index: z.int().min(0),
      embedding: z.union([z.array(z.number()), z.string()]).meta({
        description: 'Floats, or (`encoding_format: base64`) base64 of little-endian float32s.',
      }),
    }),
  ),
  model: z.string().meta({ description: "The provider's model that served (not the route's name)." }),
  usage: z.looseObject({ prompt_tokens: z.int().min(0), total_tokens: z.int().min(0) }),
  bulkhead: bulkheadAnswerFieldSchema,
});
