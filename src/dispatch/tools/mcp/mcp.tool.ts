import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpToolConfig } from './mcp.options';
import type { McpUpstream } from '../../../mcp-client';
import type { ToolArguments, ToolContext } from '../../tool';
import { mcpCallError, mcpToolError } from './mcp-call-errors';

/**
 * A tool of an upstream MCP server: its arguments as the upstream tool's `tools/call`, in the
 * calling tenant's own session with the server through the call's pool (`session: per-tenant`),
 * or the pool's session shared by every tenant (`per-pool`); either way a contained tenant's
 * calls travel in an isolated pool's session, never a normal one's. Each request goes through
 * the call's pool and egress rules and stops with the attempt (which also sends
 * `notifications/cancelled`). The answer is the result's `structuredContent` when it has one,
 * else its `content` blocks; an `isError` result fails as the entry's `isError` says.
 */
export function mcpTool(
  toolId: string,
  upstreamName: string,
  server: McpUpstream,
  config: Pick<McpToolConfig, 'timeoutMs' | 'maxResponseBytes' | 'session' | 'isError' | 'retryIsError'>,
) {
  const perTenant = config.session === 'per-tenant';
  return async (args: ToolArguments, context: ToolContext): Promise<unknown> => {
    const { signal } = context;
    let result: CallToolResult;
    try {
      result = await server.callTool(
        upstreamName,
        args,
        {
          callId: context.callId,
          signal,
          stream: (url, options) => context.http.stream(url, options),
          timeoutMs: config.timeoutMs,
          maxResponseBytes: config.maxResponseBytes,
          idempotencyKey: context.idempotencyKey,
          onProgress: context.progress,
        },
        { pool: context.pool, tenant: perTenant ? context.tenant : undefined },
      );
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw mcpCallError(toolId, error);
    }
    server.answered();
    if (result.isError === true) throw mcpToolError(toolId, result, config);
    return result.structuredContent ?? result.content;
  };
}
