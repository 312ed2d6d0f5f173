import type { ChatCompletion, ChatUsage } from '../chat.types';
import { type MessagesAnswer, type MessagesContentBlock, messagesStopReason, type MessagesUsage } from '../wire';

/** A message id as Anthropic's SDKs expect one (`msg_…`): a provider's own, or the completion's, prefixed. */
export function messageId(completionId: string): string {
  return completionId.startsWith('msg_') ? completionId : `msg_${completionId}`;
}

/** OpenAI's usage in Anthropic's terms: its prompt tokens include the cached ones, Anthropic's input tokens do not. */
export function messagesUsage(usage: ChatUsage | null | undefined): MessagesUsage {
  const details = usage?.prompt_tokens_details;
  const read = details?.cached_tokens ?? 0;
  const written = details?.cache_write_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - read - written),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_read_input_tokens: read,
    cache_creation_input_tokens: written,
  };
}

/**
 * A tool call's arguments as the `input` object Anthropic's answer has. Arguments that are not a
 * JSON object (a model that wrote broken JSON) are kept whole under `_arguments`, rather than lost.
 */
export function toolInput(args: string): Record<string, unknown> {
  try {
    const input: unknown = JSON.parse(args === '' ? '{}' : args);
    if (input !== null && typeof input === 'object' && !Array.isArray(input)) return input as Record<string, unknown>;
  } catch {
    // kept below
  }
  return { _arguments: args };
}

/** The completion the pipeline served, as Anthropic's `message`: its text, then its tool uses. */
export function toMessagesAnswer(completion: ChatCompletion): MessagesAnswer {
  const choice = completion.choices[0];
  const content: MessagesContentBlock[] = [];
  const text = choice?.message.content;
  if (typeof text === 'string' && text.length > 0) content.push({ type: 'text', text });
  for (const call of choice?.message.tool_calls ?? []) {
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: toolInput(call.function.arguments),
    });
  }
  return {
    id: messageId(completion.id),
    type: 'message',
    role: 'assistant',
    model: completion.model,
    content,
    stop_reason: messagesStopReason(choice?.finish_reason),
    stop_sequence: null,
    usage: messagesUsage(completion.usage),
  };
}
