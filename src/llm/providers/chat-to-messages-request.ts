import type { ChatContentPart, ChatMessage, ChatRequest, ChatTool, ChatToolChoice } from '../chat.types';
import {
  type MessagesBlock,
  type MessagesImageBlock,
  type MessagesTextBlock,
  type MessagesTool,
  type MessagesToolChoice,
  type MessagesToolResultBlock,
  type MessagesTurn,
} from '../wire';
import { isObject } from './json-shape';
import type { ProviderAttempt, ProviderTarget } from './llm-provider';
import { unsupportedRequestError } from './provider-errors';

/**
 * A Messages API request, as far as a Chat Completions request can be said in it: written in the
 * wire's types, which the `/v1/messages` ingress reads a client's request with.
 */
export interface AnthropicRequest extends AnthropicBody {
  model: string;
}

/**
 * The Messages body without `model`: what hosts that take the model from elsewhere (Bedrock,
 * from the URL path) send.
 */
export interface AnthropicBody {
  max_tokens: number;
  messages: MessagesTurn[];
  system?: MessagesTextBlock[];
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  tools?: MessagesTool[];
  tool_choice?: MessagesToolChoice;
}

/**
 * The attempt's Chat Completions request in the Messages API's terms. What would change the
 * answer's meaning if dropped (n > 1, non-text content, structured output, logprobs) is refused
 * with `invalid_request`; tuning knobs Anthropic lacks (penalties, seed, logit_bias, user) are
 * left out.
 *
 * `temperature` is clamped to Anthropic's 0..1: refusing 1..2 would fail over badly (a request
 * the first target took would be refused by this one), and 1 is already its most varied.
 */
export function toAnthropicRequest(attempt: ProviderAttempt): AnthropicRequest {
  return { model: attempt.target.model, ...toAnthropicBody(attempt) };
}

/** {@link toAnthropicRequest} without `model`: the one translation, for every host of the Messages API. */
export function toAnthropicBody(attempt: ProviderAttempt): AnthropicBody {
  const { request, target } = attempt;
  const refuse = (reason: string) => unsupportedRequestError(target, reason);
  if (request.n !== undefined && request.n !== null && request.n !== 1) throw refuse('n must be 1');
  refuseWhatCannotBeSaid(request, refuse);

  const { system, messages } = conversation(target, request.messages);
  const body: AnthropicBody = { max_tokens: attempt.maxOutputTokens, messages };
  if (system.length > 0) body.system = system;
  if (typeof request.temperature === 'number') body.temperature = Math.min(1, Math.max(0, request.temperature));
  if (typeof request.top_p === 'number') body.top_p = request.top_p;
  const stop = typeof request.stop === 'string' ? [request.stop] : request.stop;
  if (Array.isArray(stop) && stop.length > 0) body.stop_sequences = stop;
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => anthropicTool(tool, refuse));
    const choice = toolChoice(request.tool_choice, request.parallel_tool_calls === false, refuse);
    if (choice) body.tool_choice = choice;
  }
  return body;
}

function refuseWhatCannotBeSaid(request: ChatRequest, refuse: (reason: string) => Error): void {
  const format = request.response_format;
  if (isObject(format) && format.type !== 'text') throw refuse('response_format is not supported');
  if (request.logprobs === true) throw refuse('logprobs are not supported');
  const modalities = request.modalities;
  if (Array.isArray(modalities) && modalities.some((modality) => modality !== 'text')) {
    throw refuse('only text output is supported');
  }
}

/**
 * System and developer messages go to the top-level `system`, in order; consecutive tool
 * messages become one user turn of tool results, as Anthropic wants every result of one
 * assistant turn in the next user turn.
 */
function conversation(
  target: ProviderTarget,
  chat: readonly ChatMessage[],
): { system: MessagesTextBlock[]; messages: MessagesTurn[] } {
  const refuse = (reason: string) => unsupportedRequestError(target, reason);
  const system: MessagesTextBlock[] = [];
  const messages: MessagesTurn[] = [];
  let toolResults: MessagesBlock[] | undefined;
  for (const message of chat) {
    if (message.role === 'tool') {
      if (typeof message.tool_call_id !== 'string') throw refuse('a tool message has no tool_call_id');
      const block: MessagesToolResultBlock = {
        type: 'tool_result',
        tool_use_id: message.tool_call_id,
        content: userContent(message.content ?? '', refuse),
      };
      if (toolResults) toolResults.push(block);
      else messages.push({ role: 'user', content: (toolResults = [block]) });
      continue;
    }
    toolResults = undefined;
    if (message.role === 'system' || message.role === 'developer') {
      const content = textContent(message.content ?? '', refuse);
      const blocks = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
      // Anthropic refuses empty text blocks; an empty system message says nothing anyway.
      system.push(...blocks.filter((block) => block.text.length > 0));
    } else if (message.role === 'user') {
      messages.push({ role: 'user', content: userContent(message.content ?? '', refuse) });
    } else if (message.role === 'assistant') {
      messages.push(assistantMessage(message, refuse));
    } else {
      throw refuse(`the message role ${describe(message.role)} is not supported`);
    }
  }
  return { system, messages };
}

function assistantMessage(message: ChatMessage, refuse: (reason: string) => Error): MessagesTurn {
  const text = textContent(message.content ?? '', refuse);
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) return { role: 'assistant', content: text };
  const blocks: MessagesBlock[] = typeof text === 'string' ? (text ? [{ type: 'text', text }] : []) : [...text];
  calls.forEach((call, index) => {
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: toolInput(call.function, index, refuse),
    });
  });
  return { role: 'assistant', content: blocks };
}

/** A tool call's `arguments` string as the object Anthropic's `input` is. */
function toolInput(
  call: { arguments: string },
  index: number,
  refuse: (reason: string) => Error,
): Record<string, unknown> {
  // Some OpenAI-compatible servers send '' for a call without arguments.
  if (call.arguments.trim() === '') return {};
  let input: unknown;
  try {
    input = JSON.parse(call.arguments);
  } catch {
    throw refuse(`the arguments of tool call ${index} are not JSON`);
  }
  if (!isObject(input)) throw refuse(`the arguments of tool call ${index} are not a JSON object`);
  return input;
}

/** The image types Anthropic takes inline. */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/**
 * What a user (or a tool result) says: text parts as text blocks, `image_url` parts as image
 * blocks (a `data:` URL inline, an http(s) URL by reference); any other part is refused.
 */
function userContent(
  content: string | readonly ChatContentPart[],
  refuse: (reason: string) => Error,
): string | Array<MessagesTextBlock | MessagesImageBlock> {
  if (typeof content === 'string') return content;
  return content.map((part) => {
    if (part.type !== 'image_url') return textContent([part], refuse)[0] as MessagesTextBlock;
    const url = isObject(part.image_url) ? part.image_url.url : undefined;
    if (typeof url !== 'string') throw refuse('an image_url part has no url');
    const inline = DATA_URL.exec(url);
    if (inline) {
      if (!IMAGE_TYPES.has(inline[1])) throw refuse('images must be JPEG, PNG, GIF or WebP');
      return { type: 'image', source: { type: 'base64', media_type: inline[1], data: inline[2] } };
    }
    if (!/^https?:\/\//.test(url)) throw refuse('an image is a data: URL or an http(s) URL');
    return { type: 'image', source: { type: 'url', url } };
  });
}

/** A string stays a string; text parts become text blocks; any other part is refused, not dropped. */
function textContent(
  content: string | readonly ChatContentPart[],
  refuse: (reason: string) => Error,
): string | MessagesTextBlock[] {
  if (typeof content === 'string') return content;
  return content.map((part) => {
    if (part.type !== 'text' || typeof part.text !== 'string') {
      throw refuse(`content parts of type ${describe(part.type)} are not supported`);
    }
    return { type: 'text', text: part.text };
  });
}

function anthropicTool(tool: ChatTool, refuse: (reason: string) => Error): NonNullable<AnthropicBody['tools']>[number] {
  if (tool.type !== 'function' || !isObject(tool.function)) {
    throw refuse(`tools of type ${describe(tool.type)} are not supported`);
  }
  const { name, description, parameters } = tool.function;
  return {
    name,
    ...(description === undefined ? {} : { description }),
    // Anthropic requires a schema; a function without parameters takes an empty object.
    input_schema: (parameters ?? { type: 'object', properties: {} }) as MessagesTool['input_schema'],
  };
}

function toolChoice(
  choice: ChatToolChoice | undefined,
  oneCallOnly: boolean,
  refuse: (reason: string) => Error,
): MessagesToolChoice | undefined {
  const single = oneCallOnly ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined || choice === null) return oneCallOnly ? { type: 'auto', ...single } : undefined;
  if (choice === 'none') return { type: 'none' };
  if (choice === 'auto') return { type: 'auto', ...single };
  if (choice === 'required') return { type: 'any', ...single };
  if (isObject(choice) && choice.type === 'function' && isObject(choice.function)) {
    return { type: 'tool', name: choice.function.name, ...single };
  }
  throw refuse('this tool_choice is not supported');
}

/** A caller's type name, echoed only when it looks like one. */
function describe(value: unknown): string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{1,40}$/.test(value) ? `'${value}'` : '(unknown)';
}
