import { z } from 'zod';
import { responsesItemSchema, type ResponsesItem } from '../../wire';
import type { StoredResponse } from './stored-responses.store';

const storedResponseSchema = z.strictObject({
  id: z.string().min(1),
  input: z.array(responsesItemSchema),
  output: z.array(responsesItemSchema),
});

/**
 * A kept response as a store read it back, or null: whatever a store holds (Redis may hold
 * anything, written by anyone) is checked here as the request's own items are, so a bad entry
 * answers as one that was never kept, never a crash.
 */
export function readStoredResponse(json: string | null): StoredResponse | null {
  const parsed = parseJson(json);
  const result = storedResponseSchema.safeParse(parsed);
  return result.success ? (result.data as StoredResponse) : null;
}

/** A kept output item as a store read it back, or null (see {@link readStoredResponse}). */
export function readStoredItem(json: string | null): ResponsesItem | null {
  const result = responsesItemSchema.safeParse(parseJson(json));
  return result.success ? result.data : null;
}

/** The output items of `response` that carry an id, by their id: what `item_reference` names. */
export function itemsById(response: StoredResponse): Array<[id: string, json: string]> {
  const items: Array<[string, string]> = [];
  for (const item of response.output) {
    const id = (item as { id?: unknown }).id;
    if (typeof id === 'string' && id.length > 0) items.push([id, JSON.stringify(item)]);
  }
  return items;
}

function parseJson(json: string | null): unknown {
  if (json === null) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}
