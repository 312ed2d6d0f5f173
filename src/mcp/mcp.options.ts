import { z } from 'zod';
import { allowedHostList, allowedOriginList, intIn, oneOf } from '../common';

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
    /**
     * Origins of browser pages that may call `/mcp`, beside loopback pages (`http(s)://localhost`,
     * `127.0.0.1`, `[::1]`, any port), which always may: `https://app.example.com`. `'*'` lets
     * every page call (then only API keys stand between a web page and the tools). A request
     * without `Origin` (agent runtimes, SDKs) is never refused for it; one from another page is
     * `403` (the MCP specification's defence against DNS rebinding).
     */
    allowedOrigins: allowedOriginList,
    /**
     * Host names (no port) the service is reached by, beside loopback ones. Empty (the default):
     * `Host` is not checked. Listed: a request naming another `Host` is `403`, and a page served
     * from a listed host (the service's own origin) may call `/mcp`.
     */
    allowedHosts: allowedHostList,
  })
  .refine((mcp) => mcp.maxSessionsPerTenant <= mcp.maxSessions, {
    error: 'must not exceed maxSessions',
    path: ['maxSessionsPerTenant'],
  })
  .prefault({});

/** As the module reads them: every default filled in. */
export type McpOptions = z.output<typeof mcpSchema>;
