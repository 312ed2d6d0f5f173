import type { ChatChoice, ChatCompletion } from '../../src/llm/chat.types';

/** An OpenAI-wire chat.completion answering `text`, with the given usage (its total added). */
export function openaiAnswer(text: string, usage = { prompt_tokens: 12, completion_tokens: 5 }, model = 'gpt-test') {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop', logprobs: null }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** An OpenAI-wire choice that is one function call and no text. */
export function toolCallChoice(id: string, name: string, args: string) {
  return {
    index: 0,
    message: {
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name, arguments: args } }],
    },
    finish_reason: 'tool_calls',
    logprobs: null,
  };
}

/** An Anthropic Messages API answer ("Hi.", 12 tokens in, 3 out), with `overrides` over it. */
export function anthropicMessage(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-haiku-4-5-20251001',
    content: [{ type: 'text', text: 'Hi.' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: 3 },
    ...overrides,
  };
}

/** An OpenAI-wire chat.completion that refuses, as OpenAI's API does: no content, the `refusal` text. */
export function openaiRefusal(
  refusal: string,
  usage = { prompt_tokens: 12, completion_tokens: 7 },
  model = 'gpt-test',
) {
  const answer = openaiAnswer('', usage, model);
  return { ...answer, choices: [{ ...answer.choices[0], message: { role: 'assistant', content: null, refusal } }] };
}

/** A chat completion (the pipeline's shape) whose one choice says `message`, finished by `finish`. */
export function completionWith(
  message: Partial<ChatChoice['message']>,
  finish: ChatChoice['finish_reason'] = 'stop',
): ChatCompletion {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-test',
    choices: [
      { index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finish, logprobs: null },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
  };
}
