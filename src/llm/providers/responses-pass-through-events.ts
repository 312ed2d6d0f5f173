import type { ChatChunk, ChatCompletion, PassThroughEvent, WireEvent } from '../chat.types';
import { isObject } from './json-shape';
import { eventChunks } from './stream-chunks';

/** Events that carry some of the answer: the client has seen it once one is sent (the commit point). */
const CONTENT_EVENTS = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.function_call_arguments.delta',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
]);

/** Events whose delta is reasoning: output the target bills that no translated choice shows. */
const REASONING_EVENTS = new Set(['response.reasoning_summary_text.delta', 'response.reasoning_text.delta']);

/**
 * An event of a Responses stream as a pass-through chunk carries it, with what the route reads of
 * it: a delta is content (reasoning too), and a function call's start is (its name is said), and
 * a reasoning delta's text is output no translated choice shows. Reads events already checked.
 */
export function responsesEventOf(event: WireEvent): PassThroughEvent {
  const reasoning = REASONING_EVENTS.has(event.type) && typeof event.delta === 'string' ? event.delta : '';
  const callStart =
    event.type === 'response.output_item.added' && isObject(event.item) && event.item.type === 'function_call';
  return { event, content: CONTENT_EVENTS.has(event.type) || callStart, hiddenOutputChars: reasoning.length };
}

type Item = Record<string, unknown>;

/**
 * A whole Responses answer as the events OpenAI would have streamed it in: `response.created`
 * and `response.in_progress` (no output yet), then each output item's `output_item.added`
 * (emptied), its parts' and deltas' events with all of each at once, and `output_item.done`,
 * then `response.completed` (or `.incomplete`) with the whole response. What a cached or
 * replayed native answer is streamed as; the OpenAI SDKs build the same response from them.
 */
export function nativeResponseEvents(response: Item): WireEvent[] {
  const started = { ...response, status: 'in_progress', output: [], usage: null, incomplete_details: null };
  const events: WireEvent[] = [
    { type: 'response.created', response: started },
    { type: 'response.in_progress', response: started },
  ];
  const output = Array.isArray(response.output) ? (response.output as unknown[]) : [];
  output.forEach((item, index) => {
    if (!isObject(item)) return;
    events.push({ type: 'response.output_item.added', output_index: index, item: emptied(item) });
    events.push(...itemEvents(item, index));
    events.push({ type: 'response.output_item.done', output_index: index, item });
  });
  events.push({ type: response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response });
  return events;
}

/**
 * A native answer (`passThroughAnswer`) as the chunks of a native stream: each event of
 * {@link nativeResponseEvents} in a chunk of its own with no choices, the usage on the last.
 * What `/v1/responses` replays of a cached or idempotent native answer.
 */
export function nativeResponseChunks(completion: ChatCompletion, response: Item): ChatChunk[] {
  return eventChunks(completion, nativeResponseEvents(response), responsesEventOf);
}

/** An item as its `output_item.added` says it: what its deltas will carry left empty. */
function emptied(item: Item): Item {
  switch (item.type) {
    case 'message':
      return { ...item, status: 'in_progress', content: [] };
    case 'function_call':
      return { ...item, status: 'in_progress', arguments: '' };
    case 'reasoning':
      return { ...item, summary: [] };
    default:
      return item;
  }
}

/** The events between an item's `added` and `done`: each part's start, all of its text at once, and its end. */
function itemEvents(item: Item, outputIndex: number): WireEvent[] {
  const at = { item_id: item.id, output_index: outputIndex };
  switch (item.type) {
    case 'message':
      return parts(item.content).flatMap((part, index) => messagePartEvents(part, { ...at, content_index: index }));
    case 'function_call': {
      const args = typeof item.arguments === 'string' ? item.arguments : '';
      return [
        { type: 'response.function_call_arguments.delta', ...at, delta: args },
        { type: 'response.function_call_arguments.done', ...at, arguments: args },
      ];
    }
    case 'reasoning':
      return parts(item.summary).flatMap((part, index) => {
        const where = { ...at, summary_index: index };
        const text = typeof part.text === 'string' ? part.text : '';
        return [
          { type: 'response.reasoning_summary_part.added', ...where, part: { ...part, text: '' } },
          { type: 'response.reasoning_summary_text.delta', ...where, delta: text },
          { type: 'response.reasoning_summary_text.done', ...where, text },
          { type: 'response.reasoning_summary_part.done', ...where, part },
        ];
      });
    default:
      return [];
  }
}

function messagePartEvents(part: Item, where: Item): WireEvent[] {
  const refusal = part.type === 'refusal';
  const field = refusal ? 'refusal' : 'text';
  const kind = refusal ? 'response.refusal' : 'response.output_text';
  const text = typeof part[field] === 'string' ? (part[field] as string) : '';
  return [
    { type: 'response.content_part.added', ...where, part: { ...part, [field]: '' } },
    { type: `${kind}.delta`, ...where, delta: text },
    { type: `${kind}.done`, ...where, [field]: text },
    { type: 'response.content_part.done', ...where, part },
  ];
}

function parts(value: unknown): Item[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}
