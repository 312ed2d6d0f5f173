import { z } from 'zod';
import { allowedHostList, allowedOriginList } from '../common';
import { bool, intIn, oneOf } from '../common';

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

export type McpConfig = z.output<typeof mcpSchema>;

/**
 * The keys of a `kind: mcp` tool entry that say how its upstream server behaves: what the
 * server's error results mean, and whose MCP session a call travels in. Spread into the entry's
 * schema (`tool.schema.ts`), checked together by {@link checkMcpUpstreamKeys}.
 */
export const mcpUpstreamKeys = {
  /**
   * What a `tools/call` result with `isError: true` means. `failure`: the tool failed (MCP uses
   * `isError` for execution failures of every cause, a backend down included): the upstream's
   * failure, `transient` (502) with its text, counted by the tool's breaker (one tenant's own
   * failures refuse only that tenant), not retried unless `retryIsError`. `bad_input`: for a
   * server whose `isError` only ever means the arguments were wrong: `schema` (400) with its
   * text, not counted, not retried.
   */
  isError: oneOf(['failure', 'bad_input']).default('failure'),
  /** Retry an `isError` failure as any `transient` one (the entry's `retry` settings); only with `isError: failure`. */
  retryIsError: bool().default(false),
  /**
   * `per-tenant`: each tenant's calls travel in an MCP session of its own with the server (per
   * pool too), so a stateful server (a browser, a memory, a workspace) never shows one tenant's
   * state to another; at most 1,000 such sessions per server (the idlest without a call in flight
   * is ended first), each ended after 10 minutes without a call. `per-pool`: one session per
   * pool shared by every tenant, for stateless servers (one handshake instead of one per tenant).
   */
  session: oneOf(['per-tenant', 'per-pool']).default('per-tenant'),
};

/** The problems between the keys of {@link mcpUpstreamKeys}, added to `context` (a superRefine of the entry). */
export function checkMcpUpstreamKeys(
  value: { isError: 'failure' | 'bad_input'; retryIsError: boolean },
  context: z.RefinementCtx,
): void {
  if (value.retryIsError && value.isError === 'bad_input') {
    context.addIssue({
      code: 'custom',
      path: ['retryIsError'],
      message: 'is only for isError: failure (a bad_input result is never retried)',
    });
  }
}
