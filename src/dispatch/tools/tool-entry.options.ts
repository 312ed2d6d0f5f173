import { z } from 'zod';
import { toolChaosSchema } from './chaos.schema';
import { checkMcpUpstreamKeys, mcpUpstreamKeys } from './mcp.schema';
import { breakerSchema } from '../circuit-breaker';
import { bool, httpUrl, intIn, name, numberIn, oneOf } from '../common';
import { retrySchema } from '../retry';

const MiB = 1024 * 1024;

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

/** Header names an mcp tool may not set besides those: the MCP transport sets them per session. */
const MCP_RESERVED_HEADERS = new Set([...RESERVED_HEADERS, 'last-event-id', 'mcp-protocol-version', 'mcp-session-id']);

/** Headers sent on every request to the upstream (`${ENV}` for secrets); `reserved` names are refused. */
const headersOf = (reserved: ReadonlySet<string>) =>
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

const headers = headersOf(RESERVED_HEADERS);

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

/** An attempt's timeout when neither the config nor the `@Tool` options say. */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/** Tools defined in the config get defaults for what they leave out. */
const toolDefaults = {
  timeoutMs: timeoutMs().default(DEFAULT_TOOL_TIMEOUT_MS),
  idempotent: bool().default(false),
  containment: containmentRule().default('allow'),
};

/**
 * A tool's name on an upstream MCP server, as the MCP specification allows it (1-128 letters,
 * digits, `_`, `-`, `.`): it is sent to the upstream, and `tools` turns it into part of an id.
 */
export const UPSTREAM_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const upstreamToolName = () =>
  z.string({ error: 'must be a string' }).regex(UPSTREAM_TOOL_NAME, {
    error: 'must be 1-128 letters, digits, "_", "-" or "." (an MCP tool name)',
  });

/** A tool that POSTs its arguments as JSON to a fixed URL (`kind: http`). */
export const httpToolSchema = z.strictObject({
  ...toolCommon,
  ...toolDefaults,
  kind: z.literal('http'),
  url: httpUrl(),
  method: oneOf(['POST', 'PUT', 'PATCH']).default('POST'),
  headers: headers.optional(),
  maxResponseBytes: intIn(1, 64 * MiB).default(MiB),
  inputSchema: inputSchema.optional(),
});

/** One of Bulkhead's own tools (`kind: builtin`): `echo` answers its arguments, `delay` waits. */
export const builtinToolSchema = z.strictObject({
  ...toolCommon,
  ...toolDefaults,
  kind: z.literal('builtin'),
  builtin: oneOf(['echo', 'delay']),
});

/** A `@Tool` method's entry (`kind: code`): it overrides only what it sets; the rest comes from the decorator. */
export const codeToolSchema = z.strictObject({
  ...toolCommon,
  kind: z.literal('code'),
  lane: name().optional(),
  timeoutMs: timeoutMs().optional(),
  idempotent: bool().optional(),
  containment: containmentRule().optional(),
});

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

/**
 * Every kind's entry schema: the one list the `tools` union is made of. A new kind adds its
 * schema here, its folder under src/dispatch/tools/, and its entry in the kinds list there.
 */
const TOOL_SCHEMAS = [httpToolSchema, builtinToolSchema, codeToolSchema, mcpToolSchema] as const;

/** One entry of `tools`: a tool of one of the kinds of {@link TOOL_SCHEMAS}. */
export const tool = z.discriminatedUnion('kind', TOOL_SCHEMAS, {
  error: `must be one of ${TOOL_SCHEMAS.map((schema) => schema.shape.kind.value).join(', ')}`,
});
