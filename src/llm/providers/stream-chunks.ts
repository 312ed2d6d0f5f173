import type { ChatChunk, ChatCompletion, ChatDelta, FinishReason, PassThroughEvent, WireEvent } from '../chat.types';

/** What every chunk of one answer repeats. */
export type ChunkHead = Pick<ChatChunk, 'id' | 'model' | 'created'>;

/** A chunk of the answer's one choice, as OpenAI would have streamed it: what a typed stream's reader yields. */
export function choiceChunk(head: ChunkHead, delta: ChatDelta, finishReason: FinishReason | null = null): ChatChunk {
  const { id, model, created } = head;
  return {
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    // OpenAI's chunks say `usage: null` until the last one when usage is asked for.
    usage: null,
  };
}

/**
 * A whole native answer's events (a cached or idempotent one, replayed) as the chunks of its
 * stream: each event in a chunk of its own with no choices, the completion's usage on the last.
 */
export function eventChunks(
  completion: ChatCompletion,
  events: readonly WireEvent[],
  eventOf: (event: WireEvent) => PassThroughEvent,
): ChatChunk[] {
  const { id, created, model, usage } = completion;
  return events.map((event, index) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [],
    ...(index === events.length - 1 ? { usage } : {}),
    passThroughEvent: eventOf(event),
  }));
}
