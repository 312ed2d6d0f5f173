import type { ChatCompletion, ChatToolCall, ChatUsage } from '../chat.types';
import { chatFinishReason, isAnthropicAnswer } from '../wire';
import { isObject } from './json-shape';
import type { ProviderTarget } from './llm-provider';
import { malformedAnswerError } from './provider-errors';

/**
 * A Messages API answer as a `chat.completion`: text blocks joined into the content, tool_use
 * blocks as tool calls, anything else (thinking) left out. Usage is OpenAI's: Anthropic's
 * `input_tokens` excludes cache reads and writes, OpenAI's `prompt_tokens` includes them.
 *
 * @param createdMs epoch milliseconds: Anthropic's answer has no timestamp of its own
 */
export function fromAnthropicAnswer(target: ProviderTarget, answer: unknown, createdMs: number): ChatCompletion {
  if (!isAnthropicAnswer(answer)) throw malformedAnswerError(target, 200);
  const usage = chatUsage(answer.usage);
  if (!usage) throw malformedAnswerError(target, 200);

  const texts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const block of answer.content) {
    if (block.type === 'text') {
      if (typeof block.text !== 'string') throw malformedAnswerError(target, 200);
      texts.push(block.text);
    } else if (block.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string') throw malformedAnswerError(target, 200);
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }

  const message: ChatCompletion['choices'][number]['message'] = {
    role: 'assistant',
    // OpenAI answers null content beside tool calls, and a string otherwise.
    content: texts.length > 0 ? texts.join('') : toolCalls.length > 0 ? null : '',
    refusal: null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: answer.id,
    object: 'chat.completion',
    created: Math.floor(createdMs / 1000),
    model: typeof answer.model === 'string' ? answer.model : target.model,
    choices: [
      {
        index: 0,
        message,
        finish_reason: chatFinishReason(answer.stop_reason),
        logprobs: null,
      },
    ],
    usage,
  };
}

/**
 * Anthropic's usage (`input_tokens`, `output_tokens`, cache reads and writes) as OpenAI's, or
 * undefined when either count is missing. Cache writes go in `prompt_tokens_details.cache_write_tokens`,
 * those written for an hour (`cache_creation.ephemeral_1h_input_tokens`) also in `cache_write_1h_tokens`.
 * Any number passes as given: a count that is negative, fractional or past what the request could
 * use is the account's to bound and count (request-account.ts), not a reason to lose the answer.
 */
export function chatUsage(usage: unknown): ChatUsage | undefined {
  if (!isObject(usage) || !isNumber(usage.input_tokens) || !isNumber(usage.output_tokens)) return undefined;
  const cacheRead = isNumber(usage.cache_read_input_tokens) ? usage.cache_read_input_tokens : 0;
  const cacheWrite = isNumber(usage.cache_creation_input_tokens) ? usage.cache_creation_input_tokens : 0;
  const hourWrite = isObject(usage.cache_creation) ? usage.cache_creation.ephemeral_1h_input_tokens : undefined;
  const promptTokens = usage.input_tokens + cacheRead + cacheWrite;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: usage.output_tokens,
    total_tokens: promptTokens + usage.output_tokens,
    // OpenAI's own field for prompt-cache writes, which cost more than plain input.
    prompt_tokens_details: {
      cached_tokens: cacheRead,
      cache_write_tokens: cacheWrite,
      ...(isNumber(hourWrite) ? { cache_write_1h_tokens: hourWrite } : {}),
    },
  };
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number';
}
