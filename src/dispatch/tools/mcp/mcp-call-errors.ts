import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { isResilienceError, ResilienceError, upstreamNetworkError, upstreamStatusError } from '../../../common';
import { UpstreamAnswerEnded, UpstreamAnswerTooLarge, UpstreamResultInvalid } from '../../../mcp-client';

/** The most of an upstream's own words an error message carries. */
const MAX_UPSTREAM_TEXT = 1_000;

/**
 * The error of a `tools/call` that got no result: a refusal of Bulkhead's own (egress, the
 * pool) as it is; what the transport saw as an HTTP status, as an http tool's answer of that
 * status (5xx, 408, 429 `transient`, 404 `not_found`, another 4xx `schema`); a JSON-RPC error
 * by its code (invalid params `schema`, unknown method `not_found`, anything else the
 * upstream's failure, `transient`); a connection that failed or an answer that ended without
 * its result, `transient`. `transient` and `timeout` are retried and counted by the breaker.
 */
export function mcpCallError(toolId: string, error: unknown): ResilienceError {
  if (isResilienceError(error)) return error;
  const upstream = `upstream of tool '${toolId}'`;
  if (error instanceof UpstreamAnswerTooLarge) {
    return new ResilienceError('transient', `${upstream} answered more than ${error.limit} bytes`);
  }
  if (error instanceof UpstreamAnswerEnded) {
    return new ResilienceError('transient', `${upstream} ended its answer before the result`, { cause: error });
  }
  if (error instanceof StreamableHTTPError) {
    const status = error.code;
    if (status !== undefined && status >= 100 && status <= 599) return upstreamStatusError(toolId, status, undefined);
    return new ResilienceError('transient', `${upstream} answered in a form MCP does not use`);
  }
  if (error instanceof McpError) return jsonRpcError(toolId, error);
  if ((error as { code?: unknown } | null)?.code === 'UND_ERR_INVALID_ARG') {
    // A config header undici will not send: nothing left, on every call; not the upstream's fault.
    return new ResilienceError('invalid_request', `the request of tool '${toolId}' could not be built`, {
      cause: error,
    });
  }
  if (error instanceof UpstreamResultInvalid) {
    return new ResilienceError('transient', `${upstream} answered a result MCP does not allow: ${error.reason}`);
  }
  if ((error as Error | null)?.name === 'ZodError') {
    return new ResilienceError('transient', `${upstream} answered a result MCP does not allow`);
  }
  return upstreamNetworkError(toolId, error);
}

function jsonRpcError(toolId: string, error: McpError): ResilienceError {
  const upstream = `upstream of tool '${toolId}'`;
  switch (error.code) {
    case ErrorCode.InvalidParams:
      return new ResilienceError('schema', `${upstream} refused the arguments: ${clip(error.message)}`);
    case ErrorCode.MethodNotFound:
      return new ResilienceError('not_found', `${upstream} does not serve tools/call`);
    // The SDK's own request timer (ours decides first) or the session's end while waiting.
    case ErrorCode.RequestTimeout:
      return new ResilienceError('timeout', `${upstream} did not answer in time`);
    case ErrorCode.ConnectionClosed:
      return new ResilienceError('transient', `${upstream} closed the session before the result`);
    default:
      return new ResilienceError('transient', `${upstream} answered JSON-RPC error ${error.code}`);
  }
}

/** What an entry says its upstream's `isError` results mean (`tools.<id>.isError`, `retryIsError`). */
export interface IsErrorRule {
  readonly isError: 'failure' | 'bad_input';
  readonly retryIsError: boolean;
}

/**
 * An upstream tool's error result (`isError: true`), with the upstream's text (clipped) so the
 * agent can act on it. MCP uses it for execution failures of every cause, so by default it is
 * the upstream's failure: `transient`, counted by the breaker, retried only with `retryIsError`
 * (the tool ran: the same arguments would most likely fail the same way). With `bad_input`, for
 * a server whose error results only mean the arguments were wrong: `schema`, neither retried
 * nor counted.
 */
export function mcpToolError(toolId: string, result: CallToolResult, rule: IsErrorRule): ResilienceError {
  const text = result.content
    .filter((block): block is { type: 'text'; text: string } => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
  const message = `the upstream tool of '${toolId}' answered an error${text ? `: ${clip(text)}` : ''}`;
  if (rule.isError === 'bad_input') return new ResilienceError('schema', message);
  return new ResilienceError('transient', message, { retryable: rule.retryIsError });
}

function clip(text: string): string {
  return text.length <= MAX_UPSTREAM_TEXT ? text : `${text.slice(0, MAX_UPSTREAM_TEXT)}…`;
}
