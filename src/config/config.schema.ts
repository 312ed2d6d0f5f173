import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { allowedHostList, allowedOriginList } from './origin-lists.schema';
import { bool, intIn, name, nonEmptyString, numberIn, oneOf } from './schema-helpers';
import { chaosSchema } from './chaos.schema';
import { llmSchema } from './llm.schema';
import { mcpSchema } from './mcp.schema';
import { storeSchema } from './store.schema';
import { breakerSchema, tool } from './tool.schema';

const MiB = 1024 * 1024;
const HOUR_MS = 3_600_000;

const server = z
  .strictObject({
    port: intIn(0, 65535).default(3000),
    host: nonEmptyString().default('0.0.0.0'),
    bodyLimitBytes: intIn(1024, 100 * MiB).default(MiB),
    shutdownDrainMs: intIn(0, 600_000).default(10_000),
    /**
     * After an unhandled rejection is logged and counted: `serve` keeps serving, `drain` drains
     * and exits 1 (an uncaught exception always does).
     */
    onUnhandledRejection: oneOf(['serve', 'drain']).default('serve'),
    /**
     * A request's line, headers and body must arrive within this of its first byte, or it is
     * answered 408 and its connection closed. Covers receiving the request only, never the answer.
     */
    requestTimeoutMs: intIn(1_000, HOUR_MS).default(30_000),
    /**
     * The longest a connection may stay silent while the server waits on its client (the rest of a
     * request: 408; an answer left unread); a call still being answered is bounded by its own limits.
     */
    connectionTimeoutMs: intIn(1_000, HOUR_MS).default(10_000),
    /** Connections served at once; a new one past it is closed as it arrives. Keep it under the open-file limit. */
    maxConnections: intIn(1, 1_000_000).default(1_024),
    logLevel: oneOf(['error', 'warn', 'log', 'debug', 'verbose']).default('log'),
    /**
     * When set, `GET /metrics` is served on this port (same host) and no longer on `port`, so
     * scraping need not be exposed with the API.
     */
    metricsPort: intIn(0, 65535).optional(),
  })
  .refine(
    (server) => server.metricsPort === undefined || server.metricsPort === 0 || server.metricsPort !== server.port,
    {
      error: 'must differ from server.port',
      path: ['metricsPort'],
    },
  )
  .prefault({});

const auth = z
  .strictObject({
    allowAnonymous: bool().default(false),
    adminToken: z.string({ error: 'must be a string' }).min(16, { error: 'must be at least 16 characters' }).optional(),
    apiKeys: z
      .array(
        z.strictObject({
          sha256: z.string({ error: 'must be a string' }).regex(/^[0-9a-fA-F]{64}$/, {
            error: 'must be the SHA-256 of the key, 64 hex digits',
          }),
          tenant: name().refine((tenant) => tenant !== 'anonymous', {
            error: "'anonymous' is the tenant of callers without a key; it cannot be configured",
          }),
        }),
        { error: 'must be a list' },
      )
      .default([]),
    /**
     * Web pages that may call without a key (with `allowAnonymous`), beside loopback pages, which
     * always may: a request from any other page is `403` (a DNS-rebinding page would otherwise run
     * tools and spend the `anonymous` budget). Requests without `Origin`, and callers with a key,
     * are never refused for it. `'*'`: every page.
     */
    allowedOrigins: allowedOriginList,
    /**
     * Host names (no port) the service is reached by, beside loopback ones, checked for callers
     * without a key: empty (the default), `Host` is not checked; listed, any other `Host` is `403`.
     */
    allowedHosts: allowedHostList,
  })
  .prefault({});

/** Bounds every adaptive algorithm takes. */
const limitBounds = { min: intIn(1, 4096), max: intIn(1, 4096) };

/** A lane limit that follows the dependency (docs/design.md, "Adaptive lanes"). */
const adaptiveLimit = z.discriminatedUnion(
  'algorithm',
  [
    z.strictObject({
      algorithm: z.literal('gradient2'),
      ...limitBounds,
      tolerance: numberIn(1, 10).optional(),
      smoothing: numberIn(0.01, 1).optional(),
      longWindow: intIn(10, 100_000).optional(),
      queueSize: intIn(0, 4096).optional(),
    }),
    z.strictObject({
      algorithm: z.literal('vegas'),
      ...limitBounds,
      smoothing: numberIn(0.01, 1).optional(),
      probeMultiplier: intIn(1, 10_000).optional(),
    }),
    z.strictObject({
      algorithm: z.literal('aimd'),
      ...limitBounds,
      backoffRatio: numberIn(0.5, 0.99).optional(),
      latencyThresholdMs: intIn(1, HOUR_MS).optional(),
    }),
  ],
  { error: 'must be one of gradient2, vegas, aimd' },
);

const lane = z
  .strictObject({
    concurrency: intIn(1, 4096),
    queueCapacity: intIn(0, 100_000),
    queueTtlMs: intIn(1, HOUR_MS).default(30_000),
    maxQueuedPerTenant: intIn(1, 100_000).optional(),
    adaptive: adaptiveLimit.optional(),
  })
  .refine((value) => value.maxQueuedPerTenant === undefined || value.maxQueuedPerTenant <= value.queueCapacity, {
    error: 'must not exceed queueCapacity',
    path: ['maxQueuedPerTenant'],
  })
  .refine((value) => !value.adaptive || value.adaptive.min <= value.adaptive.max, {
    error: 'must be at least adaptive.min',
    path: ['adaptive', 'max'],
  })
  .refine(
    (value) => !value.adaptive || (value.concurrency >= value.adaptive.min && value.concurrency <= value.adaptive.max),
    {
      error: 'an adaptive lane starts at concurrency: it must be from adaptive.min to adaptive.max',
      path: ['concurrency'],
    },
  );

const rateLimit = z.strictObject({ rpm: intIn(1, 10_000_000).optional(), tpm: intIn(1, 1_000_000_000).optional() });

const rateLimits = z
  .strictObject({
    default: rateLimit.optional(),
    tenants: z.record(name(), rateLimit).default({}),
    failMode: oneOf(['open', 'closed']).default('open'),
    enforce: bool().default(true),
  })
  .prefault({});

const budgets = z
  .strictObject({
    period: oneOf(['day', 'month']).default('day'),
    defaultUsd: numberIn(0, 1_000_000).optional(),
    tenants: z.record(name(), numberIn(0, 1_000_000)).default({}),
  })
  .prefault({});

const containment = z
  .strictObject({
    defaultPosture: oneOf(['degraded', 'hard']).default('degraded'),
    pools: z
      .strictObject({
        normalMaxConcurrency: intIn(1, 4096).default(32),
        isolatedMaxConcurrency: intIn(1, 4096).default(2),
        pooledConnectionLifetimeMs: intIn(1_000, 86_400_000).default(300_000),
        timeoutMs: intIn(1_000, 600_000).default(30_000),
      })
      .refine((pools) => pools.isolatedMaxConcurrency <= pools.normalMaxConcurrency, {
        error: 'must not exceed normalMaxConcurrency',
        path: ['isolatedMaxConcurrency'],
      })
      .prefault({}),
    egress: z
      .strictObject({
        allowHosts: z.array(nonEmptyString(), { error: 'must be a list' }).default(['*']),
        allowPrivateCidrs: z
          .array(nonEmptyString().refine(isCidr, { error: 'must be a CIDR such as 10.0.0.0/8 or fd00::/8' }), {
            error: 'must be a list',
          })
          .default([]),
      })
      .prefault({}),
  })
  .prefault({});

/**
 * Breakers by name, for `@CircuitBreaker('name')` routes; `default` holds the settings every
 * breaker (a tool's own too) starts from.
 */
const breakers = z.record(name(), breakerSchema).default({});

const idempotency = z
  .strictObject({
    /** How long a finished call's outcome is replayed to a repeated key. */
    retentionMs: intIn(1_000, 86_400_000).default(60_000),
    /** Most keys remembered at once; the oldest finished ones go first, in-flight ones never. */
    maxEntries: intIn(1, 10_000_000).default(10_000),
    /**
     * The memory store's bound on the finished outcomes it keeps, in UTF-8 bytes of their JSON, all
     * tenants together; past it the oldest outcomes are dropped (their keys stay, answering
     * `idempotency_conflict`).
     */
    maxBytes: intIn(0, 1024 * MiB).default(64 * MiB),
    /** The same bound for one tenant's keys, so one tenant cannot drop everyone else's outcomes. */
    maxBytesPerTenant: intIn(0, 1024 * MiB).default(16 * MiB),
    /**
     * The largest outcome kept (both stores); a larger one still answers its call, but is not
     * replayed: its key answers `idempotency_conflict` and never runs again.
     */
    maxEntryBytes: intIn(0, 1024 * MiB).default(MiB),
  })
  .refine((bounds) => bounds.maxBytesPerTenant <= bounds.maxBytes, {
    error: 'must not exceed maxBytes',
    path: ['maxBytesPerTenant'],
  })
  .refine((bounds) => bounds.maxEntryBytes <= bounds.maxBytesPerTenant, {
    error: 'must not exceed maxBytesPerTenant',
    path: ['maxEntryBytes'],
  })
  .prefault({});

function isCidr(value: string): boolean {
  try {
    ipaddr.parseCIDR(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * The whole config file (docs/configuration.md). Every duration is in milliseconds.
 * Problems between sections are checked on the document (cross-references.ts), so they are
 * reported beside every other problem.
 */
export const configSchema = z.strictObject({
  server,
  auth,
  store: storeSchema,
  lanes: z.record(name(), lane).refine((lanes) => Object.keys(lanes).length > 0, {
    error: 'must define at least one lane',
  }),
  tools: z.record(name(), tool).default({}),
  breakers,
  idempotency,
  rateLimits,
  budgets,
  containment,
  llm: llmSchema,
  /** `/mcp`: the tools served over the Model Context Protocol; its sessions' bounds. */
  mcp: mcpSchema,
  /** Failure rehearsal: nothing of `tools.<id>.chaos` or a target's `chaos` is injected unless enabled. */
  chaos: chaosSchema,
  /** Mounts the example controller of src/example (a `@Bulkhead` route) when true. */
  examples: bool().default(false),
});

export type BulkheadConfig = z.output<typeof configSchema>;
export type LaneConfig = BulkheadConfig['lanes'][string];
export type ToolConfig = BulkheadConfig['tools'][string];
export type HttpToolConfig = Extract<ToolConfig, { kind: 'http' }>;
export type BuiltinToolConfig = Extract<ToolConfig, { kind: 'builtin' }>;
export type CodeToolConfig = Extract<ToolConfig, { kind: 'code' }>;
export type McpToolConfig = Extract<ToolConfig, { kind: 'mcp' }>;
export type RetryConfig = NonNullable<ToolConfig['retry']>;
export type BreakerConfig = BulkheadConfig['breakers'][string];
export type IdempotencyConfig = BulkheadConfig['idempotency'];
/** Each kind's entry schema, for the tool kind that builds its entries (src/dispatch/tools/). */
export { builtinToolSchema, codeToolSchema, httpToolSchema, mcpToolSchema } from './tool.schema';
export type { ChaosConfig, LlmTargetChaosConfig, ToolChaosConfig } from './chaos.schema';
