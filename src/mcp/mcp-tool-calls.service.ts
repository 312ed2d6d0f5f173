import { Inject, Injectable, Optional } from '@nestjs/common';
import { DEFAULT_PRIORITY, PriorityPolicy } from '../bulkhead';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type {
  CallToolRequest,
  CallToolResult,
  ServerNotification,
  ServerRequest,
  Tool,
} from '@modelcontextprotocol/sdk/types.js';
import {
  asResilienceError,
  CLOCK,
  type Clock,
  LazyAbortController,
  noop,
  resolveCallId,
  ResilienceError,
} from '../common';
import { CLIENT_CLOSED } from '../common/nest';
import { CallPipeline, type ToolAccessRule, ToolRegistry, type ToolDefinition } from '../dispatch';
import { parseIdempotencyKey } from '../idempotency';
import { mcpHttpRequestOf, type McpHttpRequest } from './mcp-http-request';
import { DEFAULT_MCP, MCP_MODULE_OPTIONS, type McpModuleOptions } from './mcp.module-definition';
import { failureResult, JsonRpcRefusal, listedTool, successResult } from './mcp-tool-results';
import { QueueProgress } from './queue-progress';

/** The `_meta` key of a call's idempotency key (validated like the `Idempotency-Key` header). */
export const IDEMPOTENCY_KEY_META = 'io.bulkhead/idempotency-key';

export type McpRequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * What a call's handler reads of the JSON-RPC request that carries it: the SDK's `extra` for a
 * request the SDK's server dispatched, or the same fields made by the direct path (direct-tool-call.ts).
 */
export type McpCallContext = Pick<McpRequestExtra, 'requestId' | '_meta' | 'authInfo' | 'signal' | 'sendNotification'>;

/** What a call's handler needs of its session: ending the answer of a request that was cancelled. */
export interface McpAnswers {
  endCancelled(requestId: McpRequestExtra['requestId'], request: McpHttpRequest): void;
}

/**
 * `tools/list` and `tools/call` over the trusted registry and the call pipeline, for every MCP
 * session: a call here is a tool call like `POST /v1/tools/{id}/invoke` (rate limit, budget,
 * idempotency, breaker, lane, retries, ledger, metrics), for the tenant and pool of the HTTP
 * request that carried it.
 */
@Injectable()
export class McpToolCalls {
  private readonly responses: 'sse' | 'json';
  private readonly progressIntervalMs: number;
  /**
   * The lists there can be, by the `toolAccess` rule a tenant is held to: everything it may see,
   * and that without `deny` tools; made again only when the registry's tools change.
   */
  private lists = new Map<ToolAccessRule, { all: Tool[]; uncontained: Tool[] }>();
  private listsRevision = -1;

  constructor(
    private readonly registry: ToolRegistry,
    private readonly pipeline: CallPipeline,
    @Inject(MCP_MODULE_OPTIONS) options: McpModuleOptions,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() @Inject(PriorityPolicy) private readonly priorities: PriorityPolicy | null,
  ) {
    this.responses = options.mcp?.responses ?? DEFAULT_MCP.responses;
    this.progressIntervalMs = options.mcp?.progressIntervalMs ?? DEFAULT_MCP.progressIntervalMs;
  }

  /**
   * The registry's tools the caller's tenant may see (`toolAccess`), with their input schemas. A
   * contained (or unknown) caller does not see `containment: deny` tools, which would only refuse
   * it; the list follows the containment decision of the request that asks, so a change shows on
   * the next `tools/list`.
   */
  list(extra: McpRequestExtra): Tool[] {
    const request = this.requestOf(extra);
    const { revision } = this.registry;
    if (this.listsRevision !== revision) {
      this.lists.clear();
      this.listsRevision = revision;
    }
    const rule = this.registry.accessRuleOf(request.tenant);
    let lists = this.lists.get(rule);
    if (!lists) {
      const tools = this.registry.list().filter((tool) => rule.allows(tool.id));
      lists = {
        all: tools.map(listedTool),
        uncontained: tools.filter((tool) => tool.containment !== 'deny').map(listedTool),
      };
      this.lists.set(rule, lists);
    }
    return request.contained ? lists.uncontained : lists.all;
  }

  /**
   * One tool call through the pipeline. An unknown tool or a malformed `_meta` key is a JSON-RPC
   * error; whatever the pipeline or the tool answers is a result (`isError` for a failure).
   * `notifications/cancelled` (and the session closing, and the client leaving) aborts the call
   * as a disconnect does: a waiting call leaves its queue at once, a running one is signalled.
   */
  async call(params: CallToolRequest['params'], extra: McpCallContext, answers: McpAnswers): Promise<CallToolResult> {
    const request = this.requestOf(extra);
    const tool = this.toolNamed(params.name, request.tenant);
    const idempotencyKey = idempotencyKeyOf(extra, tool);
    const callId = resolveCallId(undefined);
    const abort = new LazyAbortController();
    const stopFollowing = follow(request, extra, abort, answers);
    const progress = this.progressFor(extra);
    try {
      const success = await this.pipeline.invoke({
        tool,
        arguments: params.arguments ?? {},
        callId,
        tenant: request.tenant,
        pool: request.pool,
        contained: request.contained,
        abort,
        timeoutMs: tool.timeoutMs,
        queueTtlMs: undefined,
        idempotencyKey,
        transport: 'mcp',
        priority: this.priorities?.classOf(tool.priority ?? DEFAULT_PRIORITY, request.askedPriority, request.tenant),
        onQueued: progress?.start,
        onProgress: progress?.relay,
      });
      return successResult(success, tool);
    } catch (error) {
      return failureResult(asResilienceError(error), { callId, toolId: tool.id });
    } finally {
      progress?.stop();
      stopFollowing();
    }
  }

  private requestOf(extra: Pick<McpCallContext, 'authInfo'>): McpHttpRequest {
    const request = mcpHttpRequestOf(extra.authInfo);
    // Only `/mcp`'s route hands requests to a session, always with who sent them.
    if (!request) throw new JsonRpcRefusal(new ResilienceError('unauthorized', 'the call has no authenticated tenant'));
    return request;
  }

  private toolNamed(name: string, tenant: string): ToolDefinition {
    try {
      return this.registry.requireFor(name, tenant);
    } catch (error) {
      throw new JsonRpcRefusal(asResilienceError(error));
    }
  }

  /** Progress while the call waits, when its client sent a progress token and answers are streamed. */
  private progressFor(extra: McpCallContext): QueueProgress | undefined {
    const token = extra._meta?.progressToken;
    // A JSON answer has no room for notifications before its response.
    if (token === undefined || this.responses !== 'sse') return undefined;
    return new QueueProgress(this.clock, this.progressIntervalMs, (update) => {
      extra
        .sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...update } })
        .catch(noop);
    });
  }
}

/** `_meta['io.bulkhead/idempotency-key']`, or a JSON-RPC `invalid_request` refusal; never echoed. */
function idempotencyKeyOf(extra: McpCallContext, tool: ToolDefinition): string | undefined {
  const key = extra._meta?.[IDEMPOTENCY_KEY_META];
  try {
    return parseIdempotencyKey(key);
  } catch {
    const error = new ResilienceError(
      'invalid_request',
      `_meta["${IDEMPOTENCY_KEY_META}"] must be 1-255 visible ASCII characters`,
    );
    throw new JsonRpcRefusal(error, { toolId: tool.id });
  }
}

/**
 * Aborts the call when its client leaves (the HTTP request closes), cancels it, or its session
 * closes, as a disconnect does (the ledger then says `cancelled` or `finished_after_caller_cancel`);
 * a cancelled request's answer is ended at once. Returns what stops following.
 */
function follow(
  request: McpHttpRequest,
  extra: McpCallContext,
  abort: LazyAbortController,
  answers: McpAnswers,
): () => void {
  const onCancel = () => {
    abort.abort(CLIENT_CLOSED);
    answers.endCancelled(extra.requestId, request);
  };
  if (extra.signal.aborted) {
    onCancel();
    return noop;
  }
  extra.signal.addEventListener('abort', onCancel, { once: true });
  const stopLeaving = request.abort.onAbort((reason) => abort.abort(reason));
  return () => {
    extra.signal.removeEventListener('abort', onCancel);
    stopLeaving();
  };
}
