import type { Awaitable } from '../../../common';
import type { ResponsesItem } from '../../wire';

/** One kept response: what its model saw (its input, references resolved) and what it answered. */
export interface StoredResponse {
  /** `resp_…`, as its answer said. */
  id: string;
  /** Every item the model was asked with, earlier responses' included; `instructions` are not (OpenAI carries them over neither). */
  input: ResponsesItem[];
  /** Its output items, each with its id. */
  output: ResponsesItem[];
}

/**
 * The responses `/v1/responses` keeps for `previous_response_id` and `item_reference`, per
 * tenant: a tenant never reads what another kept. Each response is kept for `ttlMs`, and so is
 * each of its output items by its own id. Decisions are whole: one `keep` writes the response
 * and its items' index, and a read answers whole entries or nothing.
 *
 * A read that the store cannot make rejects (the request that needs it cannot be answered); an
 * entry that is not a clean kept response (Redis may hold anything) reads as none. Every read
 * hands back a copy of its own.
 */
export interface StoredResponsesStore {
  /**
   * Keeps `response` and its output items for `ttlMs` milliseconds, in place of anything kept
   * under the same ids; a copy is taken at once. A response whose JSON is larger than the
   * store's bound is not kept: false then, true otherwise. Rejects (or throws) when the store
   * cannot write.
   */
  keep(tenant: string, response: StoredResponse, ttlMs: number): Awaitable<boolean>;
  /** The response kept under `id` for `tenant`, or null (never kept, expired, evicted, or not clean). */
  response(tenant: string, id: string): Awaitable<StoredResponse | null>;
  /** The output items kept under `ids` for `tenant`, in order: null for each one not kept. */
  items(tenant: string, ids: readonly string[]): Awaitable<Array<ResponsesItem | null>>;
}

/** Injection token of the {@link StoredResponsesStore}. */
export const StoredResponsesStore = Symbol('StoredResponsesStore');

/** The bytes `response` takes as JSON, which both stores bound. */
export function storedBytes(json: string): number {
  return Buffer.byteLength(json, 'utf8');
}

/** Throws a RangeError for a TTL no store can keep. */
export function assertKeepTtl(ttlMs: number): void {
  if (!(Number.isSafeInteger(ttlMs) && ttlMs > 0)) {
    throw new RangeError(`ttlMs must be a whole number of milliseconds above 0, not ${ttlMs}`);
  }
}
