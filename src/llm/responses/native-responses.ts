import type { ChatUsage, PassThroughRequest } from '../chat.types';
import { isObject } from '../providers/json-shape';
import type { OutputItem, ResponseObject } from '../wire';
import { type ResponseIds, responsesUsage } from './chat-to-responses-answer';
import type { ResolvedResponsesRequest } from './stored/response-references';

/**
 * The pass-through half of a Responses request (`openai` targets that serve the Responses API
 * are sent it as it came): the client's body with its references resolved, without what is
 * Bulkhead's or set per attempt (`model`, `stream`, `store`, `previous_response_id`: the target
 * is sent the resolved input, and keeps nothing). Earlier answers' reasoning items are input the
 * chat estimate does not see: their bytes are added to the hold, a bound of their tokens.
 */
export function nativeResponsesRequest(resolved: ResolvedResponsesRequest): PassThroughRequest {
  const { model: _model, stream: _stream, store: _store, previous_response_id: _previous, ...body } = resolved;
  const input = typeof resolved.input === 'string' ? resolved.input : resolved.input.map(withoutBulkheadId);
  return {
    format: 'openai-responses',
    body: { ...body, input },
    betas: [],
    extraInputTokens: reasoningBytes(resolved.input),
  };
}

/**
 * An input item as the target is sent it. A reasoning item keeps its id: OpenAI binds its
 * `encrypted_content` to it ("Encrypted content item_id did not match"). Any other item's id is
 * Bulkhead's (or the client's), which OpenAI, keeping nothing with `store: false`, could only
 * refuse as unknown; the item says everything without it.
 */
function withoutBulkheadId<T extends { type?: string }>(item: T): T {
  if (item.type === 'reasoning' || !('id' in item)) return item;
  const { id: _id, ...rest } = item as T & { id?: unknown };
  return rest as T;
}

/**
 * The target's own answer as the client gets it: its output as it came (reasoning items and
 * their `encrypted_content` included) but the ids of its messages and function calls, which are
 * Bulkhead's as on the translated path (kept responses are found by them), the response's id
 * Bulkhead's, its usage the counts charged, and what the target was not sent (`store`,
 * `previous_response_id`) as the client asked it.
 */
export function nativeResponseObject(
  request: ResolvedResponsesRequest,
  answer: Record<string, unknown>,
  usage: ChatUsage | undefined,
  ids: ResponseIds,
): ResponseObject {
  // Read when the target answered (wire/openai-responses); a cached entry is checked again all the same.
  const given = Array.isArray(answer.output) ? (answer.output as unknown[]) : [];
  const output = given.filter(isObject).map(renamed(ids));
  return {
    ...(answer as unknown as ResponseObject),
    id: ids.response,
    object: 'response',
    output: output as unknown as OutputItem[],
    usage: { ...(answer.usage as object), ...responsesUsage(usage) } as ResponseObject['usage'],
    previous_response_id: request.previous_response_id ?? null,
    store: request.store === true,
  };
}

/** Each message and function call by its place among its kind (their ids are Bulkhead's); any other item as it came. */
export function renamed(ids: ResponseIds): (item: Record<string, unknown>) => Record<string, unknown> {
  let messages = 0;
  let calls = 0;
  return (item) => {
    if (item.type === 'message') return { ...item, id: ids.message(messages++) };
    if (item.type === 'function_call') return { ...item, id: ids.functionCall(calls++) };
    return item;
  };
}

function reasoningBytes(input: ResolvedResponsesRequest['input']): number {
  if (typeof input === 'string') return 0;
  let bytes = 0;
  for (const item of input) {
    if (item.type === 'reasoning') bytes += Buffer.byteLength(JSON.stringify(item), 'utf8');
  }
  return bytes;
}
