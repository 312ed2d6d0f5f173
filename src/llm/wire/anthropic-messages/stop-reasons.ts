import type { FinishReason } from '../../chat.types';

/** The stop reasons the ingress writes: one for each finish reason. */
export type MessagesStopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'refusal';

/**
 * Anthropic's stop reasons and the Chat Completions finish reason that says each, both ways. The
 * first pair of each finish reason is what that finish reason is written back as: a matched stop
 * sequence is `end_turn` too, since Chat Completions does not say which one matched.
 * `pause_turn` (a server tool paused a long turn) reads as `stop`: the answer so far is whole, and
 * a client may continue.
 */
const PAIRS: ReadonlyArray<readonly [string, FinishReason]> = [
  ['end_turn', 'stop'],
  ['max_tokens', 'length'],
  ['tool_use', 'tool_calls'],
  ['refusal', 'content_filter'],
  ['stop_sequence', 'stop'],
  ['pause_turn', 'stop'],
  ['model_context_window_exceeded', 'length'],
];

const TO_FINISH: ReadonlyMap<string, FinishReason> = new Map(PAIRS);
const TO_STOP: ReadonlyMap<FinishReason, MessagesStopReason> = new Map(
  [...PAIRS].reverse().map(([stop, finish]) => [finish, stop as MessagesStopReason]),
);

/**
 * An Anthropic stop reason as a Chat Completions finish reason. A stop reason newer than the table
 * (or none): the answer did end, and `stop` claims nothing more.
 */
export function chatFinishReason(stopReason: unknown): FinishReason {
  return (typeof stopReason === 'string' && TO_FINISH.get(stopReason)) || 'stop';
}

/** A finish reason as Anthropic's stop reason; none (or one newer than the table) as `end_turn`. */
export function messagesStopReason(finish: FinishReason | null | undefined): MessagesStopReason {
  return (finish && TO_STOP.get(finish)) || 'end_turn';
}

/**
 * The stop reason of a translated answer: `refusal` when the model refused (Chat Completions'
 * `refusal` field had text), since that is how Anthropic's API answers a turn the model declined
 * and the one stop reason a client reads as "declined"; a cut refusal is still one. Tool calls
 * beside a refusal keep `tool_use`: each of their blocks needs a `tool_result` in the next turn,
 * which a client's loop sends only on `tool_use`. Else the finish reason's.
 */
export function answerStopReason(finish: FinishReason | null | undefined, refused: boolean): MessagesStopReason {
  return refused && finish !== 'tool_calls' ? 'refusal' : messagesStopReason(finish);
}
