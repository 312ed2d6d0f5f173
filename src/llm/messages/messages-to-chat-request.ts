import type { ChatContentPart, ChatMessage, ChatRequest, ChatTool, ChatToolCall, ChatToolChoice } from '../chat.types';
import type { CountTokensRequest } from '../wire';

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
    } else if (part.type === 'document') {
      parts.push(documentPart(part));
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

/**
 * A document in Chat Completions' terms: a PDF as a `file` part (OpenAI reads PDFs), a plain text
 * as text. A source it has no part for (a URL, custom content) stays a `document` part, which a
 * target that cannot read it refuses.
 */
function documentPart(part: Extract<Block, { type: 'document' }>): ChatContentPart {
  const { source, title } = part;
  if (source.type === 'base64' && source.media_type === 'application/pdf') {
    return {
      type: 'file',
      file: { filename: title ?? 'document.pdf', file_data: `data:application/pdf;base64,${source.data}` },
    };
  }
  if (source.type === 'text') return { type: 'text', text: title ? `${title}\n\n${source.data}` : source.data };
  return { type: 'document', source };
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
