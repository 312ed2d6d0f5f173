import { compileRequestCheck } from '../../../common';
import type { WireEvent } from '../../chat.types';
import { openAiResponsesStreamEvents, RESPONSES_EVENT_TYPE } from './stream-events';

type Check = (value: unknown) => boolean;

/** The checks of the events the gateway reads, compiled once; a Map, so no event type reaches a prototype. */
const EVENT_CHECKS: ReadonlyMap<string, Check> = new Map(
  Object.entries(openAiResponsesStreamEvents).map(([type, schema]) => [type, compileRequestCheck(schema)]),
);

/**
 * Whether `value` is an event of a Responses stream the gateway may read and pass on: an object
 * whose `type` may name an event (`RESPONSES_EVENT_TYPE`), and, for the types it reads, the
 * fields it reads with their types and bounds. A type it does not know passes: OpenAI adds them.
 */
export function isResponsesStreamEvent(value: unknown): value is WireEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { type } = value as { type?: unknown };
  if (typeof type !== 'string' || !RESPONSES_EVENT_TYPE.test(type)) return false;
  const check = EVENT_CHECKS.get(type);
  return check === undefined || check(value);
}
