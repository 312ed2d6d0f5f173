import { ResilienceError } from '../../common';
import { isPlainObject } from '../invoke-request';

/** Calls in flight at once when the request does not say. */
export const DEFAULT_BATCH_CONCURRENCY = 8;
export const MAX_BATCH_CONCURRENCY = 64;
export const MAX_BATCH_CALLS = 256;

export interface BatchRequest {
  /** The entries as sent; each is checked on its own, and a bad one fails alone. */
  calls: unknown[];
  concurrency: number;
}

/**
 * Reads `{ "calls": [ ... ], "concurrency"?: n }`. Only the shape of the whole is checked
 * here; a bad entry gets its own error envelope in its place in the results.
 */
export function parseBatchRequest(body: unknown): BatchRequest {
  if (!isPlainObject(body)) throw new ResilienceError('invalid_request', 'the body must be a JSON object');
  for (const key of Object.keys(body)) {
    if (key !== 'calls' && key !== 'concurrency') {
      throw new ResilienceError('invalid_request', 'the body may only hold "calls" and "concurrency"');
    }
  }
  const { calls, concurrency = DEFAULT_BATCH_CONCURRENCY } = body;
  if (!Array.isArray(calls) || calls.length > MAX_BATCH_CALLS) {
    throw new ResilienceError('invalid_request', `"calls" must be a list of at most ${MAX_BATCH_CALLS} calls`);
  }
  if (!(
    Number.isInteger(concurrency) &&
    (concurrency as number) >= 1 &&
    (concurrency as number) <= MAX_BATCH_CONCURRENCY
  )) {
    throw new ResilienceError('invalid_request', `"concurrency" must be an integer from 1 to ${MAX_BATCH_CONCURRENCY}`);
  }
  return { calls, concurrency: concurrency as number };
}

/** One entry: `{ toolId, arguments?, idempotencyKey?, callId? }`. */
export interface BatchEntry {
  toolId: unknown;
  arguments: unknown;
  idempotencyKey: unknown;
  callId: unknown;
}

const ENTRY_FIELDS = new Set(['toolId', 'arguments', 'idempotencyKey', 'callId']);

export function parseBatchEntry(entry: unknown): BatchEntry {
  if (!isPlainObject(entry)) throw new ResilienceError('invalid_request', 'each call must be a JSON object');
  for (const key of Object.keys(entry)) {
    if (!ENTRY_FIELDS.has(key)) {
      throw new ResilienceError('invalid_request', 'a call may only hold toolId, arguments, idempotencyKey and callId');
    }
  }
  return {
    toolId: entry.toolId,
    arguments: entry.arguments,
    idempotencyKey: entry.idempotencyKey,
    callId: entry.callId,
  };
}
