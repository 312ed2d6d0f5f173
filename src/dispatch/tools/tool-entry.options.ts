import { z } from 'zod';
import { priorityClass } from '../../bulkhead';
import { breakerSchema } from '../../circuit-breaker';
import { bool, intIn, name, numberIn, oneOf } from '../../common';
import { retrySchema } from '../../retry';
import { toolChaosSchema } from '../tool-chaos.options';

/** A mebibyte: the unit of a kind's `maxResponseBytes`. */
export const MiB = 1024 * 1024;

/** Header names an http tool may not set: Bulkhead sets them, or they belong to the connection. */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'connection',
  'content-length',
  'content-type',
  'expect',
  'host',
  'idempotency-key',
  'keep-alive',
  'te',
  'transfer-encoding',
  'upgrade',
  'x-call-id',
]);

/** Headers sent on every request to the upstream (`${ENV}` for secrets); `reserved` names are refused. */
export const headersOf = (reserved: ReadonlySet<string>) =>
  z
    .record(
      z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: 'must be a valid HTTP header name' }),
      z.string({ error: 'must be a string' }).regex(/^[^\r\n\0]*$/, { error: 'must not contain line breaks' }),
    )
    .superRefine((value, context) => {
      for (const key of Object.keys(value)) {
        if (reserved.has(key.toLowerCase())) {
          context.addIssue({ code: 'custom', path: [key], message: 'is set by Bulkhead and cannot be configured' });
        }
      }
    });

/**
 * A tool's arguments as a JSON Schema (draft 2020-12): checked before the call is admitted
 * (a `schema` error), and shown to agents by MCP's `tools/list`. Compiled at start-up.
 */
export const inputSchema = z
  .record(z.string(), z.unknown(), { error: 'must be a JSON Schema object' })
  .refine((schema) => schema.type === 'object', { error: 'must be a JSON Schema with type: object' });

/** The keys of every kind's entry. */
export const toolCommon = {
  lane: name(),
  description: z.string({ error: 'must be a string' }).max(500, { error: 'must be at most 500 characters' }).optional(),
  retry: retrySchema.optional(),
  breaker: breakerSchema.optional(),
  costUsd: numberIn(0, 1_000).optional(),
  tokens: intIn(0, 10_000_000).optional(),
  /** Faults and latency injected into its attempts, while `chaos.enabled` is true. */
  chaos: toolChaosSchema.optional(),
  /** Each call gets an audit line (true) or never does (false); left out: as `audit.toolCalls` says. */
  audit: bool().optional(),
  /** Its calls' priority class in their lane, unless a caller asks for another (`X-Bulkhead-Priority`). */
  priorityClass: priorityClass().optional(),
};

export const timeoutMs = () => intIn(1, 600_000);
export const containmentRule = () => oneOf(['allow', 'deny']);

/** An attempt's timeout when neither the config nor the `@Tool` options say. */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/** Tools defined in the config get defaults for what they leave out (every kind but `code`). */
export const toolDefaults = {
  timeoutMs: timeoutMs().default(DEFAULT_TOOL_TIMEOUT_MS),
  idempotent: bool().default(false),
  containment: containmentRule().default('allow'),
};
