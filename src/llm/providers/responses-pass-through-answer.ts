import { compileRequestCheck } from '../../common';
import type { ChatCompletion, ChatToolCall, ChatUsage, FinishReason } from '../chat.types';
import { type OpenAiResponsesAnswer, openAiResponsesAnswer } from '../wire';
import { isCount } from './json-shape';
import type { ProviderTarget } from './llm-provider';
import { malformedAnswerError } from './provider-errors';

/** The wire's check of a whole upstream `response`, compiled once. */
const isResponsesAnswer = compileRequestCheck(openAiResponsesAnswer);

/**
 * A target's Responses answer, once it has the wire's shape (`wire/openai-responses`), as the
 * chat completion the pipeline keeps its books by (cache, idempotency, the call's report, the
 * charge), with the answer itself as it came beside it (`passThroughAnswer`): what the client
 * gets, reasoning items and their `encrypted_content` included. Anything else is the malformed answer.
 *
 * @param wallNowMs the clock's wall time: `created` of an answer that has none
 */
export function readResponsesAnswer(target: ProviderTarget, answer: unknown, wallNowMs: number): ChatCompletion {
  if (!isResponsesAnswer(answer)) throw malformedAnswerError(target, 200);
  const { text, refusal, toolCalls } = chatParts(answer);
  return {
    id: typeof answer.id === 'string' ? answer.id : 'resp',
    object: 'chat.completion',
    created: isCount(answer.created_at) ? answer.created_at : Math.floor(wallNowMs / 1000),
    model: typeof answer.model === 'string' ? answer.model : target.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text,
          ...(refusal === null ? {} : { refusal }),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: finishReason(answer, toolCalls.length > 0),
        logprobs: null,
      },
    ],
    usage: chatUsage(answer.usage),
    passThroughAnswer: answer as Record<string, unknown>,
  };
}

/**
 * Responses usage in Chat Completions' terms, which the account charges: its `input_tokens`
 * include the cached ones as `prompt_tokens` do, and its `output_tokens` include the reasoning
 * ones as `completion_tokens` do. Counts as given: the account bounds them (`billedUsage`).
 */
export function chatUsage(usage: OpenAiResponsesAnswer['usage']): ChatUsage {
  const cached = usage.input_tokens_details?.cached_tokens;
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  const total = usage.total_tokens ?? usage.input_tokens + usage.output_tokens;
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: total,
    ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
    ...(reasoning === undefined ? {} : { completion_tokens_details: { reasoning_tokens: reasoning } }),
  };
}

/** The answer's text, refusal and function calls, each in the order they came. */
function chatParts(answer: OpenAiResponsesAnswer): {
  text: string | null;
  refusal: string | null;
  toolCalls: ChatToolCall[];
} {
  const texts: string[] = [];
  const refusals: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const item of answer.output) {
    if (item.type === 'message') {
      for (const part of item.content) {
        if (part.type === 'output_text') texts.push(part.text);
        else refusals.push(part.refusal);
      }
    } else if (item.type === 'function_call') {
      toolCalls.push({ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } });
    }
  }
  return {
    text: texts.length > 0 ? texts.join('') : null,
    refusal: refusals.length > 0 ? refusals.join('') : null,
    toolCalls,
  };
}

/** The finish reason a Chat Completions client would have read for the same answer. */
export function finishReason(answer: OpenAiResponsesAnswer, calledTools: boolean): FinishReason {
  if (answer.status === 'incomplete') {
    return answer.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
  }
  return calledTools ? 'tool_calls' : 'stop';
}
