import { z } from 'zod';
import { bool, httpUrl, intIn, oneOf } from '../../../common';
import { PINNING_MODES, SHA256_HEX } from '../../../mcp-pinning';
import { headersOf, inputSchema, MiB, RESERVED_HEADERS, toolCommon, toolDefaults } from '../tool-entry.options';

/** Header names an mcp tool may not set besides an http tool's: the MCP transport sets them per session. */
const MCP_RESERVED_HEADERS = new Set([...RESERVED_HEADERS, 'last-event-id', 'mcp-protocol-version', 'mcp-session-id']);

/**
 * A tool's name on an upstream MCP server, as the MCP specification allows it (1-128 letters,
 * digits, `_`, `-`, `.`): it is sent to the upstream, and `tools` turns it into part of an id.
 */
export const UPSTREAM_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const upstreamToolName = () =>
  z.string({ error: 'must be a string' }).regex(UPSTREAM_TOOL_NAME, {
    error: 'must be 1-128 letters, digits, "_", "-" or "." (an MCP tool name)',
  });

/**
 * The keys of a `kind: mcp` tool entry that say how its upstream server behaves: what the
 * server's error results mean, and whose MCP session a call travels in. Spread into the entry's
 * schema (below), checked together by {@link checkMcpUpstreamKeys}.
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
  /**
   * What happens when the server's definition of a tool (name, description, input and output
   * schemas, annotations) differs from the approved one: `enforce`, the tool is quarantined (not
   * listed, calls refused `409 tool_changed`) until an operator approves the new definition
   * (`POST /v1/admin/mcp/tools/{id}/approve`); `warn`, it is still served and the change reported
   * (event, log line, `bulkhead_mcp_tool_changes_total`); `off`, nothing is compared. The
   * approved definition is the first one seen (shared through the store), or `pins`.
   */
  pinning: oneOf(PINNING_MODES).default('enforce'),
  /**
   * Pins from the config, by the tool's name on the server: the sha256 (64 lowercase hex digits)
   * of its definition, as the approve route and the log show it. A pinned tool is held to this
   * hash from its first listing (a wrong pin quarantines it from the start); no approval moves it.
   */
  pins: z
    .record(
      upstreamToolName(),
      z.string({ error: 'must be a string' }).regex(SHA256_HEX, { error: 'must be a sha256: 64 lowercase hex digits' }),
      { error: 'must be a mapping of tool names to sha256 hashes' },
    )
    .optional(),
};

/** The problems between the keys of {@link mcpUpstreamKeys}, added to `context` (a superRefine of the entry). */
export function checkMcpUpstreamKeys(
  value: {
    isError: 'failure' | 'bad_input';
    retryIsError: boolean;
    pinning: string;
    pins?: Record<string, string>;
    tool?: string;
    tools?: string[] | '*';
  },
  context: z.RefinementCtx,
): void {
  if (value.pins !== undefined && value.pinning === 'off') {
    context.addIssue({ code: 'custom', path: ['pins'], message: 'needs pinning: warn or enforce' });
  }
  const named = value.tool !== undefined ? [value.tool] : Array.isArray(value.tools) ? value.tools : undefined;
  for (const name of Object.keys(value.pins ?? {})) {
    if (named && !named.includes(name)) {
      context.addIssue({ code: 'custom', path: ['pins', name], message: 'pins a tool the entry does not import' });
    }
  }
  if (value.retryIsError && value.isError === 'bad_input') {
    context.addIssue({
      code: 'custom',
      path: ['retryIsError'],
      message: 'is only for isError: failure (a bad_input result is never retried)',
    });
  }
}

/**
 * A tool of an upstream MCP server (Streamable HTTP): `tool` names one, registered under this
 * entry's id; `tools` imports several (a list, or `'*'` for every tool the server lists at
 * start-up), each registered as `<entry id>.<name>`. Exactly one of the two.
 */
export const mcpToolSchema = z
  .strictObject({
    ...toolCommon,
    ...toolDefaults,
    kind: z.literal('mcp'),
    url: httpUrl(),
    tool: upstreamToolName().optional(),
    tools: z
      .union(
        [
          z.literal('*'),
          z.array(upstreamToolName(), { error: 'must be a list' }).min(1, { error: 'must name at least one tool' }),
        ],
        {
          error: "must be '*' or a list of tool names",
        },
      )
      .optional(),
    headers: headersOf(MCP_RESERVED_HEADERS).optional(),
    /** The most one answer of the upstream (a `tools/call` response, as JSON or an event stream) may take. */
    maxResponseBytes: intIn(1, 64 * MiB).default(MiB),
    /** Replaces the upstream's own input schema (only with `tool`): what is listed and checked. */
    inputSchema: inputSchema.optional(),
    ...mcpUpstreamKeys,
  })
  .superRefine((value, context) => {
    checkMcpUpstreamKeys(value, context);
    if ((value.tool === undefined) === (value.tools === undefined)) {
      context.addIssue({
        code: 'custom',
        path: ['tool'],
        message: "needs exactly one of tool (one upstream tool) or tools ('*' or a list, imported as <id>.<name>)",
      });
    }
    if (value.tools !== undefined && value.inputSchema !== undefined) {
      context.addIssue({
        code: 'custom',
        path: ['inputSchema'],
        message: 'is only for one tool (tool:); imported tools take the upstream server’s schemas',
      });
    }
    if (Array.isArray(value.tools) && new Set(value.tools).size !== value.tools.length) {
      context.addIssue({ code: 'custom', path: ['tools'], message: 'names a tool twice' });
    }
  });

export type McpToolConfig = z.output<typeof mcpToolSchema>;
