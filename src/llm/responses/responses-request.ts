import { z } from 'zod';
import { parseBodyFields, ResilienceError } from '../../common';
import type { ChatContentPart, ChatMessage, ChatRequest, ChatToolChoice } from '../chat.types';

const count = z.int().min(1).max(10_000_000);

const inputText = z.looseObject({ type: z.enum(['input_text', 'output_text']), text: z.string() });
const inputImage = z.looseObject({
  type: z.literal('input_image'),
  image_url: z.string().min(1, 'an image is sent by image_url (file_id needs a stored file)'),
  detail: z.enum(['low', 'high', 'auto']).optional(),
});
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
const contentPart = z.discriminatedUnion('type', [inputText, inputImage, refusalPart]);

const messageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(contentPart)]),
});
const functionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
const functionCallOutputItem = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(contentPart)]),
});
/** An earlier answer's reasoning, which clients send back: accepted, and not passed on. */
const reasoningItem = z.looseObject({ type: z.literal('reasoning') });
const item = z.union([functionCallItem, functionCallOutputItem, reasoningItem, messageItem]);

const functionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1).max(128),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

const toolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.literal('function'), name: z.string().min(1) }),
]);

const textFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string().min(1),
    schema: z.record(z.string(), z.unknown()),
    strict: z.boolean().nullable().optional(),
    description: z.string().optional(),
  }),
]);

/**
 * OpenAI's Responses request, stateless: as far as Bulkhead reads it. `reasoning`, `store`,
 * `include` and earlier answers' reasoning items are accepted and not passed on; what needs a
 * stored response (`previous_response_id`, `conversation`, item references) and the built-in
 * tools are refused by name.
 */
export const responsesRequestSchema = z
  .looseObject({
    model: z.string().min(1).max(256).meta({ description: 'A route of `llm.routes`.' }),
    input: z.union([z.string(), z.array(item).min(1)]),
    instructions: z.string().nullable().optional(),
    tools: z.array(functionTool).optional(),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    max_output_tokens: count.nullable().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    metadata: z.record(z.string(), z.string()).nullable().optional(),
    text: z.looseObject({ format: textFormat.optional() }).nullable().optional(),
    user: z.string().max(256).nullable().optional(),
    stream: z.boolean().nullable().optional(),
    store: z.boolean().nullable().optional(),
  })
  .meta({ description: "OpenAI's Responses request, stateless." });

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
type Item = Exclude<ResponsesRequest['input'], string>[number];

/** What a stateless gateway cannot answer: each with what to send instead. */
const STATEFUL_FIELDS: Record<string, string> = {
  previous_response_id:
    'Bulkhead keeps no responses: send the whole conversation in input (earlier outputs included), with store false',
  conversation: 'Bulkhead keeps no conversations: send the whole conversation in input',
  prompt: 'Bulkhead keeps no prompt templates: send the instructions and input themselves',
  background: 'Bulkhead keeps no responses to poll: send the request without background',
};

/** The request as the route reads it, or `invalid_request` naming the first field that is wrong. */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const fields = body as Record<string, unknown>;
    for (const [field, instead] of Object.entries(STATEFUL_FIELDS)) {
      if (fields[field] !== undefined && fields[field] !== null && fields[field] !== false) {
        throw new ResilienceError('invalid_request', `${field}: ${instead}`);
      }
    }
    refuseBuiltInTools(fields.tools);
    refuseItemReferences(fields.input);
  }
  return parseBodyFields(responsesRequestSchema, body);
}

function refuseBuiltInTools(tools: unknown): void {
  if (!Array.isArray(tools)) return;
  for (const entry of tools as unknown[]) {
    const type = (entry as { type?: unknown } | null)?.type;
    if (type !== 'function' && typeof type === 'string') {
      throw new ResilienceError(
        'invalid_request',
        `tools: the built-in tool ${JSON.stringify(type.slice(0, 64))} is not supported through Bulkhead; ` +
          'send function tools, and run the search or the code yourself',
      );
    }
  }
}

function refuseItemReferences(input: unknown): void {
  if (!Array.isArray(input)) return;
  if ((input as unknown[]).some((entry) => (entry as { type?: unknown } | null)?.type === 'item_reference')) {
    throw new ResilienceError(
      'invalid_request',
      'input: item_reference needs a stored response, and Bulkhead keeps none: send the item itself',
    );
  }
}

/**
 * The Responses request as the Chat Completions request the pipeline runs: `instructions` as
 * the system message, message items as messages, function calls as an assistant's tool calls
 * (consecutive ones in one message) and their outputs as tool messages, `text.format` as
 * `response_format`.
 */
export function toChatRequest(request: ResponsesRequest): ChatRequest {
  const messages: ChatMessage[] = [];
  if (request.instructions) messages.push({ role: 'system', content: request.instructions });
  if (typeof request.input === 'string') messages.push({ role: 'user', content: request.input });
  else for (const entry of request.input) addItem(messages, entry);

  const chat: ChatRequest = { model: request.model, messages };
  if (request.max_output_tokens != null) chat.max_tokens = request.max_output_tokens;
  if (request.temperature != null) chat.temperature = request.temperature;
  if (request.top_p != null) chat.top_p = request.top_p;
  if (request.user != null) chat.user = request.user;
  if (request.parallel_tool_calls != null) chat.parallel_tool_calls = request.parallel_tool_calls;
  if (request.tools !== undefined && request.tools.length > 0) {
    chat.tools = request.tools.map((tool) => ({
      type: 'function' as const,
      function: {
        name: tool.name,
        ...(tool.description != null ? { description: tool.description } : {}),
        ...(tool.parameters != null ? { parameters: tool.parameters } : {}),
        ...(tool.strict != null ? { strict: tool.strict } : {}),
      },
    }));
  }
  if (request.tool_choice !== undefined) chat.tool_choice = chatToolChoice(request.tool_choice);
  const format = request.text?.format;
  if (format?.type === 'json_object') chat.response_format = { type: 'json_object' };
  if (format?.type === 'json_schema') {
    const { name, schema, strict, description } = format;
    chat.response_format = {
      type: 'json_schema',
      json_schema: { name, schema, ...(strict != null ? { strict } : {}), ...(description ? { description } : {}) },
    };
  }
  if (request.stream === true) {
    chat.stream = true;
    // The usage chunk completes the response object of `response.completed`.
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

function addItem(messages: ChatMessage[], entry: Item): void {
  switch (entry.type) {
    case 'reasoning':
      return;
    case 'function_call': {
      const call = {
        id: entry.call_id,
        type: 'function' as const,
        function: { name: entry.name, arguments: entry.arguments },
      };
      const last = messages.at(-1);
      // One assistant turn: its text and every call it made, as Chat Completions wants them.
      if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      return;
    }
    case 'function_call_output':
      messages.push({ role: 'tool', tool_call_id: entry.call_id, content: textOf(entry.output) });
      return;
    default:
      messages.push(message(entry));
  }
}

function message(entry: Extract<Item, { role: string }>): ChatMessage {
  if (typeof entry.content === 'string') return { role: entry.role, content: entry.content };
  if (entry.role !== 'user') return { role: entry.role, content: textOf(entry.content) };
  return { role: 'user', content: entry.content.map(chatPart) };
}

function chatPart(part: z.infer<typeof contentPart>): ChatContentPart {
  if (part.type === 'input_image') {
    return { type: 'image_url', image_url: { url: part.image_url, ...(part.detail ? { detail: part.detail } : {}) } };
  }
  return { type: 'text', text: part.type === 'refusal' ? part.refusal : part.text };
}

function textOf(content: string | Array<z.infer<typeof contentPart>>): string {
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'refusal' ? part.refusal : part.type === 'input_image' ? '' : part.text))
    .join('');
}

function chatToolChoice(choice: NonNullable<ResponsesRequest['tool_choice']>): ChatToolChoice {
  if (typeof choice === 'string') return choice;
  return { type: 'function', function: { name: choice.name } };
}
