import { compileRequestCheck } from '../../common';
import type { ChatChunk } from '../chat.types';
import { openAiChatChunk } from '../wire';
import { isCount, isObject } from './json-shape';
import type { ProviderTarget } from './llm-provider';
import { malformedAnswerError, streamErrorEvent } from './provider-errors';

/** The wire's check of a chunk, compiled once: it runs on every chunk of every stream. */
const isChatChunk = compileRequestCheck(openAiChatChunk);

/** One event of an OpenAI-compatible stream, read: the chunk, and whether it is as it came. */
export interface ReadChunk {
  chunk: ChatChunk;
  /** True when nothing was filled in: the event's text may be sent on as it is. */
  asGiven: boolean;
}

/**
 * One event's `data` as the chunk the route reads: parsed, checked against the wire's shape, the
 * fields the route reads filled in where missing (a choice's index, the chunk's id, object,
 * created, model). A provider's error event is thrown as {@link streamErrorEvent}; anything else
 * that is not a chunk as the malformed answer, which costs the attempt and nothing more.
 *
 * @param wallNowMs the clock's wall time: `created` of a chunk that has none
 */
export function readOpenAiChunk(target: ProviderTarget, data: string, wallNowMs: number): ReadChunk {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw malformedAnswerError(target, 200);
  }
  if (isObject(parsed) && parsed.error !== undefined) throw streamErrorEvent(target, parsed.error, wallNowMs);
  if (!isChatChunk(parsed)) throw malformedAnswerError(target, 200);
  // Freshly parsed and nobody else's: completed in place, not copied, once per chunk.
  let asGiven = true;
  const { choices } = parsed;
  // A loop, not forEach() with a closure: this runs for every chunk of every stream.
  for (let at = 0; at < choices.length; at++) {
    if (choices[at].index === undefined) {
      choices[at].index = at;
      asGiven = false;
    }
  }
  const chunk = parsed as Record<string, unknown>;
  if (typeof chunk.id !== 'string') {
    chunk.id = '';
    asGiven = false;
  }
  if (chunk.object !== 'chat.completion.chunk') {
    chunk.object = 'chat.completion.chunk';
    asGiven = false;
  }
  if (!isCount(chunk.created)) {
    chunk.created = Math.floor(wallNowMs / 1000);
    asGiven = false;
  }
  if (typeof chunk.model !== 'string') {
    chunk.model = target.model;
    asGiven = false;
  }
  return { chunk: parsed as unknown as ChatChunk, asGiven };
}
