import { z } from 'zod';
import { compileRequestParser, ResilienceError } from '../common';
import { parseIdempotencyKey } from '../idempotency';
import type { ToolArguments, ToolDefinition } from './tool';

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
