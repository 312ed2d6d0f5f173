import type { PriorityClass } from '../bulkhead';
import type { Breaker } from '../circuit-breaker';
import type { PoolName, ToolHttp } from '../containment';
import type { RetryBudget, RetryPolicy } from '../retry';

/** What a tool handler gets besides its arguments. */
export interface ToolContext {
  readonly callId: string;
  readonly toolId: string;
  /** The authenticated tenant; `anonymous` when the config allows callers without a key. */
  readonly tenant: string;
  /** Which attempt this is: 1, then 2, 3 on retries. */
  readonly attempt: number;
  /**
   * Set when the caller sent an `Idempotency-Key`: a digest of it scoped to the tenant and the
   * tool, the same on every attempt and retry. Hand it to an upstream that de-duplicates.
   */
  readonly idempotencyKey: string | undefined;
  /**
   * Fires when the attempt times out, the client disconnects or shutdown stops the call.
   * Hand it to every I/O the handler starts.
   */
  readonly signal: AbortSignal;
  /**
   * Outbound HTTP through the pool this call was routed to (normal, or isolated when its
   * tenant is contained or unknown), with egress rules applied, stopped when the attempt is.
   * Tools have no other client.
   */
  readonly http: ToolHttp;
  /**
   * Hands the work's own progress on to the caller, when it asked for it (an MCP client's
   * `progressToken`); absent otherwise. An upstream MCP tool's progress notifications go here.
   */
  readonly progress?: (update: ToolProgress) => void;
  /**
   * The pool `http` goes through: what a tool that keeps a connection of its own per pool (an
   * upstream MCP session) picks it by, so a contained tenant's calls never use a normal one's.
   */
  readonly pool: PoolName;
}

/** How far a call's work has got: `progress` rises with each update, `total` when known. */
export interface ToolProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** Arguments are a JSON object; the result must be JSON-serialisable. */
export type ToolArguments = Record<string, unknown>;

export type ToolHandler = (args: ToolArguments, context: ToolContext) => unknown;

/**
 * A JSON Schema (draft 2020-12) of a tool's arguments, which are always a JSON object: what MCP's
 * `tools/list` shows an agent, and what the arguments are checked against before the call runs.
 */
export interface ToolInputSchema {
  readonly type: 'object';
  readonly [keyword: string]: unknown;
}

/** A tool of the trusted registry. Built once at start-up, then frozen. */
export interface ToolDefinition {
  readonly id: string;
  /** The `kind` of the config entry that made it (`http`, `builtin`, `mcp`...); `code` for a `@Tool` method. */
  readonly kind: string;
  readonly lane: string;
  readonly description: string | undefined;
  /** Per-attempt timeout, and the most a caller may ask for with `X-Timeout-Ms`. */
  readonly timeoutMs: number;
  readonly idempotent: boolean;
  /** `deny`: tenants under containment may not call it. */
  readonly containment: 'allow' | 'deny';
  /** What one attempt costs, in USD, charged to the tenant's budget. @default 0 */
  readonly costUsd: number;
  /** Tokens one call takes from the tenant's tokens-per-minute bucket. @default 0 */
  readonly tokens: number;
  /** Its calls' class in their lane, unless a caller asks for another within its ceiling. @default 'standard' */
  readonly priority?: PriorityClass;
  /** Each call gets an audit line (`true`), never does (`false`), or as `audit.toolCalls` says (absent). */
  readonly audit?: boolean;
  /** The origin of the server the tool calls (an http or mcp tool's URL, without path or credentials). */
  readonly upstream?: string;
  /** Checks the arguments before the call is admitted anywhere; throws a `schema` error. */
  readonly validate: (args: ToolArguments) => void;
  /**
   * The JSON Schema `validate` holds the arguments to; absent when the tool takes any JSON
   * object and checks it itself (an http tool's upstream, a code tool's own `validate`).
   */
  readonly inputSchema?: ToolInputSchema;
  readonly retry: RetryPolicy;
  /** Shared by every call of the tool: retries at most a share of recent calls. */
  readonly retryBudget: RetryBudget;
  /** The tool's circuit breaker, named after it. */
  readonly breaker: Breaker;
  readonly handler: ToolHandler;
}
