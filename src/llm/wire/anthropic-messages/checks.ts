import type { z } from 'zod';
import { compileRequestCheck } from '../../../common';
import { anthropicAnswer } from './answer';
import type { AnthropicStreamEvent } from '../../chat.types';
import { anthropicStreamEvents } from './stream-events';

type Check = (value: unknown) => boolean;

/** The checks of the events the gateway reads, compiled once; a Map, so no event type reaches a prototype. */
const EVENT_CHECKS: ReadonlyMap<string, Check> = new Map(
  Object.entries(anthropicStreamEvents).map(([type, schema]) => [type, compileRequestCheck(schema)]),
);
const answerCheck = compileRequestCheck(anthropicAnswer);

/**
 * Whether `value` is an event of Anthropic's stream the gateway may read: an object with a
 * string `type`, and, for the types it reads, the fields it reads with their types and bounds.
 * An event type it does not know passes: Anthropic adds them, and they are not read.
 */
export function isAnthropicStreamEvent(value: unknown): value is AnthropicStreamEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { type } = value as { type?: unknown };
  if (typeof type !== 'string') return false;
  const check = EVENT_CHECKS.get(type);
  return check === undefined || check(value);
}

/** A whole `message` answer as {@link isAnthropicAnswer} found it. */
export type AnthropicAnswer = z.input<typeof anthropicAnswer>;

/** Whether `value` is a whole `message` answer the gateway may read. */
export function isAnthropicAnswer(value: unknown): value is AnthropicAnswer {
  return answerCheck(value);
}
