import type { ChatCompletion, ChatUsage } from '../chat.types';
import { answerStopReason, type MessagesAnswer, type MessagesContentBlock, type MessagesUsage } from '../wire';

/** A message id as Anthropic's SDKs expect one (`msg_…`): a provider's own, or the completion's, prefixed. */
export function messageId(completionId: string): string {
  return completionId.startsWith('msg_') ? completionId : `msg_${completionId}`;
}

/** OpenAI's usage in Anthropic's terms: its prompt tokens include the cached ones, Anthropic's input tokens do not. */
export function messagesUsage(usage: ChatUsage | null | undefined): MessagesUsage {
  const details = usage?.prompt_tokens_details;
  const read = details?.cached_tokens ?? 0;
  const written = details?.cache_write_tokens ?? 0;
  const forAnHour = details?.cache_write_1h_tokens;
  return {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - read - written),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_read_input_tokens: read,
    cache_creation_input_tokens: written,
    ...(typeof forAnHour === 'number'
      ? {
          cache_creation: {
            ephemeral_5m_input_tokens: Math.max(0, written - forAnHour),
            ephemeral_1h_input_tokens: forAnHour,
          },
        }
      : {}),
  };
}

/**
 * A native answer's usage with the counts it was charged for: the provider's other fields
 * (`server_tool_use`, `service_tier`) as sent, its counts those of `billed`, so that a client of
 * the native path, as of every other, never sees a count Bulkhead did not charge.
 */
export function nativeUsage(native: unknown, billed: ChatUsage): Record<string, unknown> {
  const given = typeof native === 'object' && native !== null && !Array.isArray(native) ? native : {};
  return { ...given, ...messagesUsage(billed) };
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

/**
 * The completion the pipeline served, as Anthropic's `message`: its text, then its refusal (a text
 * block of its own, as a replayed stream gives it, with `stop_reason` `refusal`), then its tool uses.
 */
export function toMessagesAnswer(completion: ChatCompletion): MessagesAnswer {
  const choice = completion.choices[0];
  const content: MessagesContentBlock[] = [];
  const text = choice?.message.content;
  if (typeof text === 'string' && text.length > 0) content.push({ type: 'text', text });
  const refusal = choice?.message.refusal;
  const refused = typeof refusal === 'string' && refusal.length > 0;
  if (refused) content.push({ type: 'text', text: refusal });
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
    stop_reason: answerStopReason(choice?.finish_reason, refused),
    stop_sequence: null,
    usage: messagesUsage(completion.usage),
  };
}
