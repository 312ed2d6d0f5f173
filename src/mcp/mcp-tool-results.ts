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
 */
export function successResult(success: ToolCallSuccess): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(success.result) }],
    structuredContent: success as unknown as Record<string, unknown>,
  };
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
