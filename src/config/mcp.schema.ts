import { z } from 'zod';
import { intIn, oneOf } from './schema-helpers';

const DAY_MS = 86_400_000;

/**
 * `/mcp`, the tools served over the Model Context Protocol (Streamable HTTP). Sessions are
 * bounded in number (all tenants, and each tenant) and in idle time; `responses` says how a
 * POST carrying requests is answered.
 */
export const mcpSchema = z
  .strictObject({
    /** Sessions open at once, all tenants together. */
    maxSessions: intIn(1, 1_000_000).default(1_000),
    /** Sessions one tenant may hold open at once. */
    maxSessionsPerTenant: intIn(1, 1_000_000).default(100),
    /** A session with no request for this long is closed (its id then answers 404). */
    sessionIdleMs: intIn(1_000, DAY_MS).default(1_800_000),
    /**
     * `sse`: a POST is answered with an event stream, which can carry progress while a call waits
     * in its lane; `json`: with one JSON body (no progress; kinder to proxies that buffer).
     */
    responses: oneOf(['sse', 'json']).default('sse'),
    /** How often a call that waits in its lane reports progress (clients that asked for it). */
    progressIntervalMs: intIn(100, 600_000).default(1_000),
  })
  .refine((mcp) => mcp.maxSessionsPerTenant <= mcp.maxSessions, {
    error: 'must not exceed maxSessions',
    path: ['maxSessionsPerTenant'],
  })
  .prefault({});

export type McpConfig = z.output<typeof mcpSchema>;
