import { z } from 'zod';
import { CALL_ID_PATTERN, parseRequestPart } from '../../common';
import { idempotencyKeySchema } from '../../idempotency';
import { toolArgumentsSchema } from '../invoke-request';

/** Calls in flight at once when the request does not say. */
export const DEFAULT_BATCH_CONCURRENCY = 8;
export const MAX_BATCH_CONCURRENCY = 64;
export const MAX_BATCH_CALLS = 256;

const CALLS_RULE = `"calls" must be a list of at most ${MAX_BATCH_CALLS} calls`;
const CONCURRENCY_RULE = `"concurrency" must be an integer from 1 to ${MAX_BATCH_CONCURRENCY}`;
const CALL_ID_RULE = 'callId must be 1-48 letters, digits, "_" or "-"';

/** The fields of one entry; each is checked when the call reaches it, as a lone call's would be. */
const BATCH_CALL_FIELDS = {
  toolId: z.string().meta({ description: 'A tool of the registry; an unknown one is `not_found`, in its place.' }),
  arguments: toolArgumentsSchema.optional(),
  idempotencyKey: idempotencyKeySchema.optional(),
  callId: z
    .string({ error: CALL_ID_RULE })
    .regex(CALL_ID_PATTERN, { error: CALL_ID_RULE })
    .optional()
    .meta({ description: 'The call id of this entry (generated when absent), as `X-Call-Id` for a lone call.' }),
};

const batchCallShapeError = (issue: { code: string }) =>
  issue.code === 'unrecognized_keys'
    ? 'a call may only hold toolId, arguments, idempotencyKey and callId'
    : 'each call must be a JSON object';

/** One entry of a batch: `{ toolId, arguments?, idempotencyKey?, callId? }`. */
export const batchCallSchema = z.strictObject(BATCH_CALL_FIELDS, { error: batchCallShapeError });

/** An entry's own shape: an object with only the fields above, whatever their values. */
const batchCallShapeSchema = z.strictObject(
  {
    toolId: z.unknown().optional(),
    arguments: z.unknown().optional(),
    idempotencyKey: z.unknown().optional(),
    callId: z.unknown().optional(),
  } satisfies Record<keyof typeof BATCH_CALL_FIELDS, z.ZodType>,
  { error: batchCallShapeError },
);

/** `calls`: at most {@link MAX_BATCH_CALLS} entries of `call`. */
function batchCalls<T extends z.ZodType>(call: T) {
  return z.array(call, { error: CALLS_RULE }).max(MAX_BATCH_CALLS, { error: CALLS_RULE });
}

/**
 * The body of `POST /v1/tools/batch` as a whole: `{ "calls": [ ... ], "concurrency"?: n }`. Only
 * the shape of the whole is checked with it; a bad entry gets its own error envelope in its
 * place in the results ({@link batchRequestDocumentSchema} shows what a good entry is).
 */
export const batchRequestSchema = z.strictObject(
  {
    calls: batchCalls(z.unknown()),
    concurrency: z
      .int({ error: CONCURRENCY_RULE })
      .min(1, { error: CONCURRENCY_RULE })
      .max(MAX_BATCH_CONCURRENCY, { error: CONCURRENCY_RULE })
      .default(DEFAULT_BATCH_CONCURRENCY),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? 'the body may only hold "calls" and "concurrency"'
        : 'the body must be a JSON object',
  },
);

/** The batch body as the OpenAPI document shows it: {@link batchRequestSchema} with its entries' schema. */
export const batchRequestDocumentSchema = batchRequestSchema.extend({ calls: batchCalls(batchCallSchema) });

export interface BatchRequest {
  /** The entries as sent; each is checked on its own, and a bad one fails alone. */
  calls: unknown[];
  concurrency: number;
}

/** Reads `{ "calls": [ ... ], "concurrency"?: n }`, or `invalid_request` for the whole batch. */
export function parseBatchRequest(body: unknown): BatchRequest {
  return parseRequestPart(batchRequestSchema, body);
}

/** One entry as sent, its shape checked: only the known fields, not yet their values. */
export type BatchEntry = Partial<Record<keyof typeof BATCH_CALL_FIELDS, unknown>>;

/** Checks an entry's shape: an object with only `toolId`, `arguments`, `idempotencyKey`, `callId`. */
export function parseBatchEntry(entry: unknown): BatchEntry {
  return parseRequestPart(batchCallShapeSchema, entry);
}

/** Checks one field of an entry with its schema in {@link batchCallSchema}. */
export function parseBatchField<K extends Exclude<keyof BatchEntry, 'toolId'>>(
  field: K,
  value: unknown,
): z.output<(typeof BATCH_CALL_FIELDS)[K]> {
  return parseRequestPart(BATCH_CALL_FIELDS[field], value) as z.output<(typeof BATCH_CALL_FIELDS)[K]>;
}
