import { ResilienceError } from '../common';
import type { ToolArguments, ToolDefinition } from './tool';

export interface InvokeOptions {
  arguments: ToolArguments;
  /** The attempt timeout: the tool's, or shorter if the caller asked. */
  timeoutMs: number;
  /** The queue TTL the caller asked for, if any; the lane's otherwise. */
  queueTtlMs: number | undefined;
}

type Headers = Record<string, string | string[] | undefined>;

/**
 * Reads an invoke request: the body `{ "arguments": { ... } }` and the optional
 * `X-Timeout-Ms` / `X-Queue-Ttl-Ms` headers, which may shorten the configured values but
 * never lengthen them.
 */
export function parseInvokeRequest(
  tool: ToolDefinition,
  laneQueueTtlMs: number,
  body: unknown,
  headers: Headers,
): InvokeOptions {
  return {
    arguments: parseBody(body),
    timeoutMs: parseDuration(headers['x-timeout-ms'], 'X-Timeout-Ms', tool.timeoutMs) ?? tool.timeoutMs,
    queueTtlMs: parseDuration(headers['x-queue-ttl-ms'], 'X-Queue-Ttl-Ms', laneQueueTtlMs),
  };
}

function parseBody(body: unknown): ToolArguments {
  if (body === undefined || body === null) return {};
  if (!isPlainObject(body)) throw new ResilienceError('invalid_request', 'the body must be a JSON object');
  for (const key of Object.keys(body)) {
    if (key !== 'arguments') throw new ResilienceError('invalid_request', 'the body may only hold "arguments"');
  }
  const args = body.arguments;
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
