import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { type CallLabels, type ErrorEnvelope, type ResilienceError, toEnvelope } from '../common';
import type { ToolCallSuccess, ToolDefinition, ToolInputSchema } from '../dispatch';

/** What `tools/list` shows for a tool that declares no input schema. */
export const ANY_ARGUMENTS: ToolInputSchema = Object.freeze({
  type: 'object',
  description: 'Any JSON object: this tool declares no input schema and checks its arguments itself.',
});

/** A tool of the registry as `tools/list` shows it. */
export function listedTool(tool: ToolDefinition): Tool {
  return {
    name: tool.id,
    description: tool.description,
    inputSchema: (tool.inputSchema ?? ANY_ARGUMENTS) as Tool['inputSchema'],
    annotations: { idempotentHint: tool.idempotent },
  };
}

/**
 * A call that succeeded: the tool's result as JSON text (what a model reads), and the whole
 * success body of the REST route as `structuredContent` (call id, pool, attempts, replayed).
 * An upstream MCP tool's content blocks (its result when it had no structured content) are
 * handed on as they are: text, images and resources the upstream meant for the model.
 */
export function successResult(success: ToolCallSuccess, tool: ToolDefinition): CallToolResult {
  const { result } = success;
  const content =
    tool.kind === 'mcp' && isContentBlocks(result) ? result : [{ type: 'text' as const, text: JSON.stringify(result) }];
  return { content, structuredContent: success as unknown as Record<string, unknown> };
}

/** An upstream's `content`: a list of blocks, each with its `type`. */
function isContentBlocks(result: unknown): result is CallToolResult['content'] {
  return (
    Array.isArray(result) &&
    result.every((block) => typeof block === 'object' && block !== null && typeof block.type === 'string')
  );
}

/**
 * A call the pipeline refused or the tool failed: a result with `isError`, the message as text
 * and the REST route's error envelope as `structuredContent`, so an agent sees the kind and
 * `retryAfterMs` without parsing prose.
 */
export function failureResult(error: ResilienceError, labels: CallLabels): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: error.message }],
    structuredContent: toEnvelope(error, labels) as unknown as Record<string, unknown>,
  };
}

/**
 * A request refused as a JSON-RPC error (a malformed one, an unknown tool): the SDK answers
 * with the `code`, `message` and `data` of what a handler throws; here the envelope's
 * `jsonrpcCode`, its message, and the envelope itself.
 */
export class JsonRpcRefusal extends Error {
  readonly code: number;
  readonly data: ErrorEnvelope;

  constructor(error: ResilienceError, labels: CallLabels = {}) {
    super(error.message);
    this.code = error.jsonrpcCode;
    this.data = toEnvelope(error, labels);
  }
}
