import type { ChatChunk, ChatCompletion, PassThroughRequest } from './chat.types';
import { nativeMessageChunks } from './providers/messages-pass-through-answer';
import { nativeResponseChunks } from './providers/responses-pass-through-events';

/**
 * Each pass-through format's replay: a whole answer in that format (a cache hit, an idempotent
 * replay) as the chunks its stream would have carried, each with its event, so that the client's
 * ingress streams it as the target would have.
 */
const REPLAYS: Readonly<
  Record<PassThroughRequest['format'], (completion: ChatCompletion, answer: Record<string, unknown>) => ChatChunk[]>
> = {
  'anthropic-messages': nativeMessageChunks,
  'openai-responses': nativeResponseChunks,
};

/**
 * The chunks a whole answer is replayed as to a client that asked in `format`: the events of the
 * target's own answer where the completion carries one (thinking and all), else undefined (the
 * completion's own chunks then).
 */
export function passThroughChunks(
  format: PassThroughRequest['format'] | undefined,
  completion: ChatCompletion,
): ChatChunk[] | undefined {
  const answer = completion.passThroughAnswer;
  return format && answer ? REPLAYS[format](completion, answer) : undefined;
}
