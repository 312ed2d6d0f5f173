import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpToolConfig } from '../../config';
import type { McpUpstream } from '../../mcp/upstream';
import type { ToolArguments, ToolContext } from '../tool';
import { mcpCallError, mcpToolError } from './mcp-call-errors';

/**
 * A tool of an upstream MCP server: its arguments as the upstream tool's `tools/call`, through
 * the server's session of the call's pool (a contained tenant's calls on the isolated pool's
 * session, never a normal one's), each request through the call's pool and egress rules and
 * stopped with the attempt (which also sends `notifications/cancelled`). The answer is the
 * result's `structuredContent` when it has one, else its `content` blocks.
 */
export function mcpTool(
  toolId: string,
  upstreamName: string,
  server: McpUpstream,
  config: Pick<McpToolConfig, 'timeoutMs' | 'maxResponseBytes'>,
) {
  return async (args: ToolArguments, context: ToolContext): Promise<unknown> => {
    const { signal } = context;
    let result: CallToolResult;
    try {
      result = await server.session(context.pool).callTool(upstreamName, args, {
        callId: context.callId,
        signal,
        stream: (url, options) => context.http.stream(url, options),
        timeoutMs: config.timeoutMs,
        maxResponseBytes: config.maxResponseBytes,
        idempotencyKey: context.idempotencyKey,
      });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw mcpCallError(toolId, error);
    }
    server.answered();
    if (result.isError === true) throw mcpToolError(toolId, result);
    return result.structuredContent ?? result.content;
  };
}
