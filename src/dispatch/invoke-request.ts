import { z } from 'zod';
import { ResilienceError } from '../common';
import { compileRequestParser, parseRequestPart } from '../common/request-schema';
import type { ToolArguments, ToolDefinition } from './tool';

/** 1-255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
const IDEMPOTENCY_KEY_RULE = 'Idempotency-Key must be 1-255 visible ASCII characters';

/** A tool's arguments: any JSON object, kept as it is (not copied), checked by the tool itself. */
export const toolArgumentsSchema = z
  .custom<ToolArguments>(isPlainObject, { error: '"arguments" must be a JSON object' })
  .meta({
    type: 'object',
    description: "The tool's arguments, any JSON object; the tool checks them itself (`schema` when it refuses them).",
  });

/**
 * The body of `POST /v1/tools/{toolId}/invoke`: `{ "arguments": { ... } }`, nothing else. No body
 * (or `null`) and absent arguments mean `{}`.
 */
export const invokeBodySchema = z.strictObject(
  { arguments: toolArgumentsSchema.optional() },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? 'the body may only hold "arguments"' : 'the body must be a JSON object',
  },
);

/** `Idempotency-Key` (a header, or a batch entry's `idempotencyKey`); a bad one is never echoed. */
export const idempotencyKeySchema = z
  .string({ error: IDEMPOTENCY_KEY_RULE })
  .regex(IDEMPOTENCY_KEY, { error: IDEMPOTENCY_KEY_RULE })
  .meta({ description: '1-255 visible ASCII characters (0x21-0x7e), scoped to the tenant and the tool.' });

/** Digits, and up to 3 decimals. */
const DURATION = /^\d{1,9}(\.\d{1,3})?$/;

/**
 * `X-Timeout-Ms` and `X-Queue-Ttl-Ms`: a positive number of milliseconds with up to 3 decimals.
 * The upper bound is the configured value, so it is checked after the schema.
 */
export const durationHeaderSchema = z.string().regex(DURATION);

// Every call passes here: compiled, so a valid body is answered without running zod.
const parseInvokeBody = compileRequestParser(invokeBodySchema);

export interface InvokeOptions {
  arguments: ToolArguments;
  /** The attempt timeout: the tool's, or shorter if the caller asked. */
  timeoutMs: number;
  /** The queue TTL the caller asked for, if any; the lane's otherwise. */
  queueTtlMs: number | undefined;
  /** The `Idempotency-Key` header, if sent. */
  idempotencyKey: string | undefined;
}

type Headers = Record<string, string | string[] | undefined>;

/**
 * Reads an invoke request: the body `{ "arguments": { ... } }`, the optional `X-Timeout-Ms` /
 * `X-Queue-Ttl-Ms` headers, which may shorten the configured values but never lengthen them,
 * and the optional `Idempotency-Key`.
 */
export function parseInvokeRequest(
  tool: Pick<ToolDefinition, 'timeoutMs'>,
  laneQueueTtlMs: number,
  body: unknown,
  headers: Headers,
): InvokeOptions {
  return {
    arguments: parseBody(body),
    idempotencyKey: parseIdempotencyKey(headers['idempotency-key']),
    timeoutMs: parseDuration(headers['x-timeout-ms'], 'X-Timeout-Ms', tool.timeoutMs) ?? tool.timeoutMs,
    queueTtlMs: parseDuration(headers['x-queue-ttl-ms'], 'X-Queue-Ttl-Ms', laneQueueTtlMs),
  };
}

/** The key must be 1-255 visible ASCII characters; a bad one is refused and never echoed. */
export function parseIdempotencyKey(header: unknown): string | undefined {
  if (header === undefined) return undefined;
  // The schema's own pattern first: a valid key costs one regex test, as the body's compiled check.
  if (typeof header === 'string' && IDEMPOTENCY_KEY.test(header)) return header;
  return parseRequestPart(idempotencyKeySchema, header);
}

function parseBody(body: unknown): ToolArguments {
  if (body === undefined || body === null) return {};
  return parseInvokeBody(body).arguments ?? {};
}

function parseDuration(header: string | string[] | undefined, name: string, maxMs: number): number | undefined {
  if (header === undefined) return undefined;
  // The schema's pattern, tested directly: its bound is the configured value, not the schema's.
  const value = typeof header === 'string' && DURATION.test(header) ? Number(header) : Number.NaN;
  if (!(value > 0 && value <= maxMs)) {
    throw new ResilienceError('invalid_request', `${name} must be a positive number of milliseconds, at most ${maxMs}`);
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
