import { z } from 'zod';

/*
 * Anthropic's Messages request, typed once: the schema the `/v1/messages` ingress reads a client's
 * body with (compiled where it is hot), and the types the translation for `anthropic` and
 * `bedrock` targets writes a request in. Fields Bulkhead does not read are kept (loose objects).
 */

const count = z.int().min(1).max(10_000_000);
const cacheControl = { cache_control: z.unknown().optional() };

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string(), ...cacheControl });
const imageBlock = z.looseObject({
  type: z.literal('image'),
  source: z.union([
    z.looseObject({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string() }),
    z.looseObject({ type: z.literal('url'), url: z.string().min(1) }),
  ]),
  ...cacheControl,
});
const toolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  ...cacheControl,
});
const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.union([textBlock, imageBlock]))]).optional(),
  is_error: z.boolean().optional(),
  ...cacheControl,
});
/**
 * Earlier turns' thinking, which Claude Code sends back: passed on to the targets that speak the
 * Messages API, left out of a translation.
 */
const thinkingBlock = z.looseObject({ type: z.enum(['thinking', 'redacted_thinking']) });
/** A PDF or a plain text to read: inline (base64 or text) or by URL. */
const documentBlock = z.looseObject({
  type: z.literal('document'),
  source: z.union([
    z.looseObject({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string() }),
    z.looseObject({ type: z.literal('text'), media_type: z.string().min(1), data: z.string() }),
    z.looseObject({ type: z.literal('url'), url: z.string().min(1) }),
    z.looseObject({ type: z.literal('content'), content: z.unknown() }),
  ]),
  title: z.string().nullable().optional(),
  ...cacheControl,
});
const block = z.discriminatedUnion('type', [
  textBlock,
  imageBlock,
  documentBlock,
  toolUseBlock,
  toolResultBlock,
  thinkingBlock,
]);

const message = z.strictObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(block)]),
});

const tool = z.looseObject({
  name: z.string().min(1).max(128),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal('object') }),
  type: z.literal('custom').optional(),
  ...cacheControl,
});

const toolChoice = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.strictObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.strictObject({
    type: z.literal('tool'),
    name: z.string().min(1),
    disable_parallel_tool_use: z.boolean().optional(),
  }),
  z.strictObject({ type: z.literal('none') }),
]);

/**
 * Anthropic's Messages request, as far as Bulkhead reads it; fields it does not know are kept.
 * `anthropic` and `bedrock` targets are sent it as it came (`thinking`, `cache_control`, thinking
 * and document blocks, new fields); other targets its translation, which leaves out what Chat
 * Completions cannot say. The server-side features no target of a route would run the same
 * (`mcp_servers`, `container`, server tools) are refused by name.
 */
export const messagesRequestSchema = z
  .looseObject({
    model: z.string().min(1).max(256).meta({ description: 'A route of `llm.routes`.' }),
    max_tokens: count.meta({ description: 'Required: the bound of what the request may cost.' }),
    messages: z.array(message).min(1),
    system: z.union([z.string(), z.array(textBlock)]).optional(),
    stop_sequences: z.array(z.string().min(1)).max(16).optional(),
    temperature: z.number().min(0).max(1).optional(),
    top_p: z.number().min(0).max(1).optional(),
    top_k: z.int().min(0).optional(),
    tools: z.array(tool).optional(),
    tool_choice: toolChoice.optional(),
    metadata: z.looseObject({ user_id: z.string().max(256).nullable().optional() }).optional(),
    stream: z.boolean().optional(),
    thinking: z.unknown().optional(),
    service_tier: z.enum(['auto', 'standard_only']).optional(),
  })
  .meta({ description: "Anthropic's Messages request." });

export type MessagesRequest = z.infer<typeof messagesRequestSchema>;

/** `POST /v1/messages/count_tokens`: the Messages request without `max_tokens`, which it does not take. */
export const countTokensRequestSchema = messagesRequestSchema.extend({ max_tokens: count.optional() });

export type CountTokensRequest = z.infer<typeof countTokensRequestSchema>;

/** The parts of a request, as read and as written. */
export type MessagesTextBlock = z.infer<typeof textBlock>;
export type MessagesImageBlock = z.infer<typeof imageBlock>;
export type MessagesToolUseBlock = z.infer<typeof toolUseBlock>;
export type MessagesToolResultBlock = z.infer<typeof toolResultBlock>;
export type MessagesBlock = z.infer<typeof block>;
export type MessagesTurn = z.infer<typeof message>;
export type MessagesTool = z.infer<typeof tool>;
export type MessagesToolChoice = z.infer<typeof toolChoice>;
