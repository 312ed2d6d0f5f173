import { z } from 'zod';
import { authSchema } from '../auth';
import { budgetsSchema } from '../budget';
import { lanesSchema, prioritySchema } from '../bulkhead';
import { overloadSchema } from '../overload';
import { breakerSchema } from '../circuit-breaker';
import { bool, intIn, name, nonEmptyString, oneOf } from '../common';
import { containmentSchema } from '../containment';
import { idempotencySchema } from '../idempotency';
import { rateLimitsSchema } from '../rate-limit';
import { storeSchema } from '../store';
import { chaosSchema } from '../chaos';
import { auditSchema, toolAccessSchema, toolEntrySchema } from '../dispatch';
import { llmSchema } from '../llm';
import { mcpSchema } from '../mcp';

const MiB = 1024 * 1024;
const HOUR_MS = 3_600_000;

const server = z
  .strictObject({
    port: intIn(0, 65535).default(3000),
    host: nonEmptyString().default('0.0.0.0'),
    bodyLimitBytes: intIn(1024, 100 * MiB).default(MiB),
    shutdownDrainMs: intIn(0, 600_000).default(10_000),
    /**
     * The service runs its request path hot before it listens (src/warm-up), for at most this
     * long, so that its first requests are served nearer warm speed; 0 leaves it out. The service's
     * own entry only: an app that imports the modules starts as it always did.
     */
    warmUpMs: intIn(0, 60_000).default(3_000),
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

/**
 * Breakers by name, for `@CircuitBreaker('name')` routes; `default` holds the settings every
 * breaker (a tool's own too) starts from.
 */
const breakers = z.record(name(), breakerSchema).default({});

/**
 * The whole config file (docs/configuration.md). Every duration is in milliseconds.
 * Problems between sections are checked on the document (cross-references.ts), so they are
 * reported beside every other problem.
 */
export const configSchema = z.strictObject({
  server,
  auth: authSchema.prefault({}),
  store: storeSchema,
  lanes: lanesSchema,
  tools: z.record(name(), toolEntrySchema).default({}),
  /** The highest priority class each tenant may ask for with X-Bulkhead-Priority. */
  priority: prioritySchema.prefault({}),
  /** The process overload guard: sheds new calls, lowest class first, while the event loop runs late or the heap is nearly full. */
  overload: overloadSchema.prefault({}),
  /** Which tools each tenant may see and call (every tool, every tenant, unless said). */
  toolAccess: toolAccessSchema.prefault({}),
  breakers,
  idempotency: idempotencySchema.prefault({}),
  rateLimits: rateLimitsSchema.prefault({}),
  budgets: budgetsSchema.prefault({}),
  containment: containmentSchema.prefault({}),
  llm: llmSchema,
  /** `/mcp`: the tools served over the Model Context Protocol; its sessions' bounds. */
  mcp: mcpSchema,
  /** Failure rehearsal: nothing of `tools.<id>.chaos` or a target's `chaos` is injected unless enabled. */
  chaos: chaosSchema,
  /** Which tool calls get an audit line (docs/operations.md, "Audit trail"). */
  audit: auditSchema.prefault({}),
  /** Mounts the example controller of src/example (a `@Bulkhead` route) when true. */
  examples: bool().default(false),
});

export type BulkheadConfig = z.output<typeof configSchema>;
