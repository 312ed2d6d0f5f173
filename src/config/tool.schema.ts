import { z } from 'zod';
import { toolChaosSchema } from './chaos.schema';
import { bool, httpUrl, intIn, name, numberIn, oneOf } from './schema-helpers';

const MiB = 1024 * 1024;
const HOUR_MS = 3_600_000;

/**
 * How many retries a tool may spend: at most `percent` of the calls of the last `windowMs`,
 * but always `minRetries` (Envoy's retry budget), so a failing dependency cannot turn into a
 * retry storm.
 */
const retryBudget = z.strictObject({
  percent: intIn(0, 100).optional(),
  minRetries: intIn(0, 1_000_000).optional(),
  windowMs: intIn(1_000, HOUR_MS).optional(),
});

/** Retry settings; what is left out comes from the `@Tool` options, then the built-in defaults. */
export const retrySchema = z
  .strictObject({
    maxAttempts: intIn(1, 10).optional(),
    baseDelayMs: intIn(0, 60_000).optional(),
    maxDelayMs: intIn(0, 300_000).optional(),
    /** The most all attempts and waits of one call may take, from its first attempt. */
    deadlineMs: intIn(1, HOUR_MS).optional(),
    budget: retryBudget.optional(),
  })
  .refine(
    (value) =>
      value.maxDelayMs === undefined || value.baseDelayMs === undefined || value.maxDelayMs >= value.baseDelayMs,
    { error: 'must be at least baseDelayMs', path: ['maxDelayMs'] },
  );

/** Breaker settings; what is left out comes from `breakers.default`, then the built-in defaults. */
export const breakerSchema = z.strictObject({
  errorThresholdPercentage: intIn(1, 100).optional(),
  volumeThreshold: intIn(1, 100_000).optional(),
  resetTimeoutMs: intIn(100, HOUR_MS).optional(),
  rollingCountTimeoutMs: intIn(1_000, HOUR_MS).optional(),
});

/** Header names an http tool may not set: Bulkhead sets them, or they belong to the connection. */
const RESERVED_HEADERS = new Set([
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

const headers = z
  .record(
    z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: 'must be a valid HTTP header name' }),
    z.string({ error: 'must be a string' }).regex(/^[^\r\n\0]*$/, { error: 'must not contain line breaks' }),
  )
  .superRefine((value, context) => {
    for (const key of Object.keys(value)) {
      if (RESERVED_HEADERS.has(key.toLowerCase())) {
        context.addIssue({ code: 'custom', path: [key], message: 'is set by Bulkhead and cannot be configured' });
      }
    }
  });

/**
 * An http tool's arguments as a JSON Schema (draft 2020-12): checked before the call is admitted
 * (a `schema` error), and shown to agents by MCP's `tools/list`. Compiled at start-up.
 */
const inputSchema = z
  .record(z.string(), z.unknown(), { error: 'must be a JSON Schema object' })
  .refine((schema) => schema.type === 'object', { error: 'must be a JSON Schema with type: object' });

const toolCommon = {
  lane: name(),
  description: z.string({ error: 'must be a string' }).max(500, { error: 'must be at most 500 characters' }).optional(),
  retry: retrySchema.optional(),
  breaker: breakerSchema.optional(),
  costUsd: numberIn(0, 1_000).optional(),
  tokens: intIn(0, 10_000_000).optional(),
  /** Faults and latency injected into its attempts, while `chaos.enabled` is true. */
  chaos: toolChaosSchema.optional(),
};

const timeoutMs = () => intIn(1, 600_000);
const containmentRule = () => oneOf(['allow', 'deny']);

/** Tools defined in the config get defaults for what they leave out. */
const toolDefaults = {
  timeoutMs: timeoutMs().default(30_000),
  idempotent: bool().default(false),
  containment: containmentRule().default('allow'),
};

/** One entry of `tools`: an http, builtin or code tool. */
export const tool = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({
      ...toolCommon,
      ...toolDefaults,
      kind: z.literal('http'),
      url: httpUrl(),
      method: oneOf(['POST', 'PUT', 'PATCH']).default('POST'),
      headers: headers.optional(),
      maxResponseBytes: intIn(1, 64 * MiB).default(MiB),
      inputSchema: inputSchema.optional(),
    }),
    z.strictObject({ ...toolCommon, ...toolDefaults, kind: z.literal('builtin'), builtin: oneOf(['echo', 'delay']) }),
    // A `@Tool` method's entry overrides only what it sets; the rest comes from the decorator.
    z.strictObject({
      ...toolCommon,
      kind: z.literal('code'),
      lane: name().optional(),
      timeoutMs: timeoutMs().optional(),
      idempotent: bool().optional(),
      containment: containmentRule().optional(),
    }),
  ],
  { error: 'must be one of http, builtin, code' },
);
