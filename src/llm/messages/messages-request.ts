import { z } from 'zod';
import { parseBodyFields, ResilienceError } from '../../common';
import type { ChatContentPart, ChatMessage, ChatRequest, ChatTool, ChatToolCall, ChatToolChoice } from '../chat.types';

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
/** Earlier turns' thinking, which Claude Code sends back: accepted, and not passed on. */
const thinkingBlock = z.looseObject({ type: z.enum(['thinking', 'redacted_thinking']) });
const block = z.discriminatedUnion('type', [textBlock, imageBlock, toolUseBlock, toolResultBlock, thinkingBlock]);

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
 * Anthropic's Messages request, as far as Bulkhead reads it. `thinking`, `cache_control` and
 * earlier turns' thinking blocks are accepted and not passed on; the server-side features a
 * translation cannot keep (`mcp_servers`, `container`, server tools) are refused by name.
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

/** Server-side features of Anthropic's API that a route's targets would not run. */
const REFUSED_FIELDS = ['mcp_servers', 'container'] as const;

/** The request as the route reads it, or `invalid_request` naming the first field that is wrong. */
export function parseMessagesRequest(body: unknown): MessagesRequest;
export function parseMessagesRequest(body: unknown, schema: typeof countTokensRequestSchema): CountTokensRequest;
export function parseMessagesRequest(
  body: unknown,
  schema: typeof messagesRequestSchema | typeof countTokensRequestSchema = messagesRequestSchema,
): CountTokensRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return parseBodyFields(schema, body);
  for (const field of REFUSED_FIELDS) {
    if ((body as Record<string, unknown>)[field] !== undefined) {
      throw new ResilienceError('invalid_request', `${field}: not supported through Bulkhead`);
    }
  }
  const tools = (body as { tools?: unknown }).tools;
  if (Array.isArray(tools)) {
    const server = tools.find(
      (entry: unknown) =>
        typeof entry === 'object' &&
        entry !== null &&
        'type' in entry &&
        entry.type !== undefined &&
        entry.type !== 'custom',
    ) as { type: unknown } | undefined;
    if (server) {
      throw new ResilienceError(
        'invalid_request',
        `tools: the server tool ${JSON.stringify(String(server.type)).slice(0, 80)} is not supported through Bulkhead; ` +
          'send your own tools (name, description, input_schema)',
      );
    }
  }
  return parseBodyFields(schema, body);
}

/**
 * The Messages request as the Chat Completions request the pipeline runs: `system` first,
 * each tool result as a tool message (before the rest of its user turn), tool uses as tool
 * calls, images as `image_url` parts. `top_k` has no Chat Completions field and is left out.
 */
export function toChatRequest(request: CountTokensRequest): ChatRequest {
  const messages: ChatMessage[] = [];
  if (request.system !== undefined) {
    const text =
      typeof request.system === 'string' ? request.system : request.system.map((part) => part.text).join('\n');
    if (text.length > 0) messages.push({ role: 'system', content: text });
  }
  for (const turn of request.messages) {
    if (turn.role === 'user') messages.push(...userMessages(turn.content));
    else messages.push(assistantMessage(turn.content));
  }
  const chat: ChatRequest = { model: request.model, messages };
  if (request.max_tokens !== undefined) chat.max_tokens = request.max_tokens;
  if (request.temperature !== undefined) chat.temperature = request.temperature;
  if (request.top_p !== undefined) chat.top_p = request.top_p;
  if (request.stop_sequences !== undefined && request.stop_sequences.length > 0) chat.stop = request.stop_sequences;
  if (request.metadata?.user_id) chat.user = request.metadata.user_id;
  if (request.tools !== undefined && request.tools.length > 0) {
    chat.tools = request.tools.map((entry): ChatTool => ({
      type: 'function',
      function: {
        name: entry.name,
        ...(entry.description !== undefined ? { description: entry.description } : {}),
        parameters: entry.input_schema,
      },
    }));
  }
  if (request.tool_choice !== undefined) {
    chat.tool_choice = chatToolChoice(request.tool_choice);
    if ('disable_parallel_tool_use' in request.tool_choice && request.tool_choice.disable_parallel_tool_use) {
      chat.parallel_tool_calls = false;
    }
  }
  if (request.stream === true) {
    chat.stream = true;
    // The usage chunk becomes the stream's message_delta, so it is always asked for.
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

type Content = CountTokensRequest['messages'][number]['content'];
type Block = Exclude<Content, string>[number];

function userMessages(content: Content): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const messages: ChatMessage[] = [];
  const parts: ChatContentPart[] = [];
  for (const part of content) {
    if (part.type === 'tool_result') {
      messages.push({ role: 'tool', tool_call_id: part.tool_use_id, content: toolResultContent(part) });
    } else if (part.type === 'text' || part.type === 'image') {
      parts.push(contentPart(part));
    }
  }
  if (parts.length > 0) messages.push({ role: 'user', content: parts });
  return messages;
}

function assistantMessage(content: Content): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const calls: ChatToolCall[] = [];
  for (const part of content) {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'tool_use') {
      calls.push({
        id: part.id,
        type: 'function',
        function: { name: part.name, arguments: JSON.stringify(part.input) },
      });
    }
  }
  const message: ChatMessage = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

function toolResultContent(result: Extract<Block, { type: 'tool_result' }>): string | ChatContentPart[] {
  const { content } = result;
  const parts =
    content === undefined ? [] : typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
  // Chat Completions has no is_error: the result says so in words, which is what the model reads.
  if (result.is_error) parts.unshift({ type: 'text', text: 'Error:' });
  if (parts.every((part) => part.type === 'text')) return parts.map((part) => part.text).join('\n');
  return parts.map(contentPart);
}

function contentPart(part: Extract<Block, { type: 'text' | 'image' }>): ChatContentPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const { source } = part;
  const url = source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url;
  return { type: 'image_url', image_url: { url } };
}

function chatToolChoice(choice: NonNullable<CountTokensRequest['tool_choice']>): ChatToolChoice {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
  }
}
