import { isPromiseLike, ResilienceError } from '../../../common';
import type { ResponsesInputEntry, ResponsesItem, ResponsesRequest } from '../../wire';
import type { StoredResponse, StoredResponsesStore } from './stored-responses.store';

/** A Responses request whose references are resolved: its input is what the model sees. */
export type ResolvedResponsesRequest = ResponsesRequest & { input: string | ResponsesItem[] };

/**
 * Distinct items one request may name: each costs a store read (a Redis GET), and a body of
 * nothing but references must not turn into tens of thousands of them.
 */
export const MAX_ITEM_REFERENCES = 1_000;

type ItemReference = Extract<ResponsesInputEntry, { type: 'item_reference' }>;

const isReference = (entry: ResponsesInputEntry): entry is ItemReference => entry.type === 'item_reference';

/** Whether `request` names a kept response or item: only then does resolving it read the store. */
export function hasReferences(request: ResponsesRequest): boolean {
  return request.previous_response_id != null || (Array.isArray(request.input) && request.input.some(isReference));
}

/** The items a request's input stands for: a string input is one user message. */
export function inputItems(input: string | ResponsesItem[]): ResponsesItem[] {
  return typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
}

/**
 * `request` with what it names in place, as OpenAI resolves it: the previous response's input
 * and output before its own input (not its instructions, which OpenAI does not carry over), and
 * each `item_reference` replaced by the kept item of that id. A name this tenant has no kept
 * response or item for is OpenAI's `400` (never kept, expired, evicted, or another tenant's:
 * the same answer, so a tenant learns nothing of another's ids); a store that cannot answer is
 * `unavailable`. The request must have references ({@link hasReferences}).
 */
export async function resolveReferences(
  request: ResponsesRequest,
  tenant: string,
  store: StoredResponsesStore,
): Promise<ResolvedResponsesRequest> {
  const previousId = request.previous_response_id ?? undefined;
  const own: ResponsesInputEntry[] = Array.isArray(request.input) ? request.input : inputItems(request.input);
  const referenced = [...new Set(own.filter(isReference).map((reference) => reference.id))];
  if (referenced.length > MAX_ITEM_REFERENCES) {
    throw new ResilienceError('invalid_request', `input: at most ${MAX_ITEM_REFERENCES} distinct item references`);
  }
  const [previous, items] = await Promise.all([
    previousId === undefined ? null : read(() => store.response(tenant, previousId)),
    referenced.length === 0 ? [] : read(() => store.items(tenant, referenced)),
  ]);
  if (previousId !== undefined && previous === null) throw previousResponseNotFound(previousId);
  const byId = new Map<string, ResponsesItem>();
  referenced.forEach((id, index) => {
    const item = items[index];
    if (item) byId.set(id, item);
  });
  const resolved = own.map((entry): ResponsesItem => {
    if (!isReference(entry)) return entry;
    const item = byId.get(entry.id);
    if (!item) throw itemNotFound(entry.id);
    return item;
  });
  return { ...request, input: [...earlierItems(previous), ...resolved] };
}

function earlierItems(previous: StoredResponse | null): ResponsesItem[] {
  return previous ? [...previous.input, ...previous.output] : [];
}

async function read<T>(decide: () => T | PromiseLike<T>): Promise<T> {
  try {
    const decided = decide();
    return isPromiseLike(decided) ? await decided : decided;
  } catch (error) {
    throw new ResilienceError('unavailable', 'the store of kept responses did not answer: try again', { cause: error });
  }
}

/** OpenAI's own answer to a `previous_response_id` it has no response for. */
export function previousResponseNotFound(id: string): ResilienceError {
  return new ResilienceError('invalid_request', `Previous response with id '${clip(id)}' not found.`, {
    openai: { code: 'previous_response_not_found', param: 'previous_response_id' },
  });
}

/** OpenAI's own answer to an `item_reference` it has no item for. */
export function itemNotFound(id: string): ResilienceError {
  return new ResilienceError('invalid_request', `Item with id '${clip(id)}' not found.`, {
    openai: { param: 'input' },
  });
}

/** The caller's own id, echoed; held short, as the schema already bounds it. */
function clip(id: string): string {
  return id.slice(0, 256);
}
