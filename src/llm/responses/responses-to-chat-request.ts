import type { ChatContentPart, ChatMessage, ChatRequest, ChatToolChoice } from '../chat.types';
import type { ResponsesContentPart, ResponsesItem, ResponsesRequest } from '../wire';
import type { ResolvedResponsesRequest } from './stored/response-references';

type Item = ResponsesItem;

/**
 * The Responses request as the Chat Completions request the pipeline runs: `instructions` as
 * the system message, message items as messages, function calls as an assistant's tool calls
 * (consecutive ones in one message) and their outputs as tool messages, `text.format` as
 * `response_format`. References to kept responses are resolved before (stored/).
 */
export function toChatRequest(request: ResolvedResponsesRequest): ChatRequest {
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

function chatPart(part: ResponsesContentPart): ChatContentPart {
  if (part.type === 'input_image') {
    return { type: 'image_url', image_url: { url: part.image_url, ...(part.detail ? { detail: part.detail } : {}) } };
  }
  return { type: 'text', text: part.type === 'refusal' ? part.refusal : part.text };
}

function textOf(content: string | Array<ResponsesContentPart>): string {
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'refusal' ? part.refusal : part.type === 'input_image' ? '' : part.text))
    .join('');
}

function chatToolChoice(choice: NonNullable<ResponsesRequest['tool_choice']>): ChatToolChoice {
  if (typeof choice === 'string') return choice;
  return { type: 'function', function: { name: choice.name } };
}
