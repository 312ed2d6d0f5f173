import type { IncomingMessage } from 'node:http';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  isJSONRPCRequest,
  RELATED_TASK_META_KEY,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { problemOfCallParams } from './call-tool-request';

/** A `tools/call` the direct path answers: its JSON-RPC id and params, as the client sent them. */
export interface DirectToolCall {
  id: RequestId;
  params: CallToolRequest['params'];
}

/**
 * The POST's `tools/call`, when it is one the SDK would take and hand to the tools/call handler
 * with nothing else to do, so the direct path can answer it as the SDK would; `undefined` for
 * anything else, which the SDK answers (an `initialize`, notifications, a batch, other methods,
 * malformed messages or params, a wrong `Accept` or content type, an unsupported protocol
 * version, a task-augmented call). The checks are the SDK's own where it has them (its zod
 * schemas, its media type and protocol version checks); the session's are the caller's. `body`
 * is the platform's parse of the Node `request`'s.
 */
export function directToolCallOf(body: unknown, request: IncomingMessage): DirectToolCall | undefined {
  if (!isToolsCall(body)) return undefined;
  const { headers } = request;
  const accept = headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!isJsonContentType(headers['content-type']) || repeatsContentType(request)) return undefined;
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) {
    return undefined;
  }
  // Our own check first: params it refuses get our JSON-RPC error, which the SDK's path sends.
  if (problemOfCallParams(body.params) !== undefined || !CallToolRequestSchema.safeParse(body).success)
    return undefined;
  const params = body.params as CallToolRequest['params'];
  // Tasks take the SDK's own handling (a capability check, a task store); Bulkhead declares none.
  if (params.task !== undefined || params._meta?.[RELATED_TASK_META_KEY] !== undefined) return undefined;
  return { id: body.id, params };
}

/** A JSON-RPC request (the SDK's strict schema: nothing but `jsonrpc`, `id`, `method`, `params`) of `tools/call`. */
function isToolsCall(body: unknown): body is { id: RequestId; params: unknown } {
  return (
    typeof body === 'object' &&
    body !== null &&
    (body as { method?: unknown }).method === 'tools/call' &&
    isJSONRPCRequest(body)
  );
}

/**
 * Node keeps the first of two `Content-Type` headers; the SDK reads a Web `Headers`, which joins
 * them, and refuses the result: such a request is the SDK's to refuse.
 */
function repeatsContentType(request: IncomingMessage): boolean {
  const raw = request.rawHeaders;
  let seen = 0;
  for (let index = 0; index < raw.length; index += 2) {
    if (raw[index]!.length === 12 && raw[index]!.toLowerCase() === 'content-type' && ++seen > 1) return true;
  }
  return false;
}
