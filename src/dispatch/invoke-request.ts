import { ResilienceError } from '../common';
import type { ToolArguments, ToolDefinition } from './tool';

/** 1-255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

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
  if (typeof header === 'string' && IDEMPOTENCY_KEY.test(header)) return header;
  throw new ResilienceError('invalid_request', 'Idempotency-Key must be 1-255 visible ASCII characters');
}

/** `{ "arguments": { ... } }`: an absent body or absent arguments are `{}`. */
function parseBody(body: unknown): ToolArguments {
  if (body === undefined || body === null) return {};
  if (!isPlainObject(body)) throw new ResilienceError('invalid_request', 'the body must be a JSON object');
  for (const key of Object.keys(body)) {
    if (key !== 'arguments') throw new ResilienceError('invalid_request', 'the body may only hold "arguments"');
  }
  return parseArguments(body.arguments);
}

export function parseArguments(args: unknown): ToolArguments {
  if (args === undefined) return {};
  if (!isPlainObject(args)) throw new ResilienceError('invalid_request', '"arguments" must be a JSON object');
  return args;
}

function parseDuration(header: string | string[] | undefined, name: string, maxMs: number): number | undefined {
  if (header === undefined) return undefined;
  const value = typeof header === 'string' && /^\d{1,9}(\.\d{1,3})?$/.test(header) ? Number(header) : Number.NaN;
  if (!(value > 0 && value <= maxMs)) {
    throw new ResilienceError('invalid_request', `${name} must be a positive number of milliseconds, at most ${maxMs}`);
  }
  return value;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
