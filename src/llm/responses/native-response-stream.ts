import type { ChatUsage, WireEvent } from '../chat.types';
import { isObject } from '../providers/json-shape';
import { RESPONSES_EVENT_TYPE } from '../wire';
import type { ResponseIds } from './chat-to-responses-answer';
import { nativeResponseObject, renamed } from './native-responses';
import type { ResolvedResponsesRequest } from './stored/response-references';

/** The events that end a whole response: held back, to carry the usage charged and the `bulkhead` field. */
const ENDINGS = new Set(['response.completed', 'response.incomplete']);

/** An event as the client is sent it: its type, and its fields without the target's numbering. */
export interface ClientEvent {
  readonly type: string;
  readonly fields: Record<string, unknown>;
}

/**
 * A target's Responses stream (a pass-through) as its client gets it: each event as the target
 * sent it, but what names the response or its messages and function calls, which are
 * Bulkhead's as on the translated path (kept responses are found by them): the response's id,
 * `previous_response_id` and `store` as the client asked, and each item's id, named by its
 * place among its kind when its `output_item.added` comes (as `nativeResponseObject` names a
 * whole answer's). Every event is numbered by the sink, which writes events of its own too.
 */
export class NativeResponseStream {
  /** Item ids by the output index the target gives their items: events name an item both ways. */
  private readonly names = new Map<number, string>();
  private messages = 0;
  private calls = 0;
  /** The response's end, held until the usage is known. */
  private ending: WireEvent | undefined;

  constructor(
    private readonly request: ResolvedResponsesRequest,
    private readonly ids: ResponseIds,
  ) {}

  /** `event` as its client is sent it; undefined while it is held (the end) or not to be sent. */
  pass(event: WireEvent): ClientEvent | undefined {
    // Checked when the target sent it (wire/openai-responses); a replay's are made here. Its type
    // names it in the framing (`event: <type>`), so no other is ever written.
    if (!RESPONSES_EVENT_TYPE.test(event.type)) return undefined;
    if (ENDINGS.has(event.type)) {
      this.ending = event;
      return undefined;
    }
    const { type: _type, sequence_number: _sequence, ...fields } = event;
    if (event.type === 'response.output_item.added') this.name(fields.output_index as number, fields.item);
    if (isObject(fields.response)) fields.response = this.response(fields.response);
    const name = typeof fields.output_index === 'number' ? this.names.get(fields.output_index) : undefined;
    if (name !== undefined) {
      if (typeof fields.item_id === 'string') fields.item_id = name;
      if (isObject(fields.item)) fields.item = { ...fields.item, id: name };
    }
    return { type: event.type, fields };
  }

  /** The response's end, its response as a whole answer's (usage charged), with `bulkhead`; none if it never came. */
  end(usage: ChatUsage | undefined, bulkhead: unknown): ClientEvent | undefined {
    if (!this.ending) return undefined;
    const answer = this.ending.response as Record<string, unknown>;
    const response = {
      ...nativeResponseObject(this.request, answer, usage, this.ids),
      ...(bulkhead !== undefined ? { bulkhead } : {}),
    };
    return { type: this.ending.type, fields: { response } };
  }

  private name(outputIndex: number, item: unknown): void {
    if (!isObject(item) || this.names.has(outputIndex)) return;
    if (item.type === 'message') this.names.set(outputIndex, this.ids.message(this.messages++));
    else if (item.type === 'function_call') this.names.set(outputIndex, this.ids.functionCall(this.calls++));
  }

  /** A response before its end (created, in progress): Bulkhead's id, and what the client asked of keeping it. */
  private response(response: Record<string, unknown>): Record<string, unknown> {
    const output = Array.isArray(response.output) ? response.output.filter(isObject).map(renamed(this.ids)) : [];
    return {
      ...response,
      id: this.ids.response,
      output,
      previous_response_id: this.request.previous_response_id ?? null,
      store: this.request.store === true,
    };
  }
}
