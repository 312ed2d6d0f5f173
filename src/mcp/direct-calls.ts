import type { ServerResponse } from 'node:http';
import {
  CallToolResultSchema,
  ErrorCode,
  type JSONRPCMessage,
  McpError,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '../common';
import { DirectAnswer } from './direct-answer';
import type { DirectToolCall } from './direct-tool-call';
import type { McpHttpRequest } from './mcp-http-request';
import type { McpCallContext, McpToolCalls } from './mcp-tool-calls.service';

/**
 * The `tools/call` requests of one session answered without the SDK's transport and server
 * (docs/mcp.md, "How /mcp answers"): the same handler the SDK's server calls, with the fields of
 * `extra` it reads, and the answer the SDK would give, written straight to the response. Per
 * request that saves the SDK's Web `Request`/`Response` and stream conversion, its zod parsing of
 * the whole message (again for the handler), and its bookkeeping of streams. What the SDK's server
 * still does for them is kept: the result checked against `CallToolResultSchema`, a throw's code,
 * message and data as the JSON-RPC error, cancellation by `notifications/cancelled` and by the
 * session closing (both handed over by the session, which hears them from the SDK).
 */
export class DirectCalls {
  /** What cancels each call in flight, by its JSON-RPC id. */
  private readonly inFlight = new Map<RequestId, AbortController>();

  constructor(
    private readonly sessionId: string,
    private readonly tools: McpToolCalls,
    private readonly streamed: boolean,
    private readonly clock: Clock,
  ) {}

  /**
   * Whether a call with this id may go the direct way: not while one with the same id is in
   * flight here (which the SDK's bookkeeping would then have to sort out).
   */
  takes(id: RequestId): boolean {
    return !this.inFlight.has(id);
  }

  /** Runs the call and writes its answer to `raw`; resolves once it is written (or cancelled). */
  async run(call: DirectToolCall, caller: McpHttpRequest, raw: ServerResponse): Promise<void> {
    const cancel = new AbortController();
    const answer = new DirectAnswer(raw, this.sessionId, this.streamed, this.clock);
    this.inFlight.set(call.id, cancel);
    const context: McpCallContext = {
      requestId: call.id,
      _meta: call.params._meta,
      authInfo: caller.toAuthInfo(),
      signal: cancel.signal,
      // As the SDK's server: a cancelled request sends nothing more.
      sendNotification: async (notification) => {
        if (!cancel.signal.aborted) answer.notify({ ...notification, jsonrpc: '2.0' } as JSONRPCMessage);
      },
    };
    let message: JSONRPCMessage;
    try {
      const result = checkedResult(
        await this.tools.call(call.params, context, { endCancelled: () => answer.endCancelled() }),
      );
      message = { result, jsonrpc: '2.0', id: call.id };
    } catch (error) {
      message = errorMessage(call.id, error);
    } finally {
      if (this.inFlight.get(call.id) === cancel) this.inFlight.delete(call.id);
    }
    if (!cancel.signal.aborted) answer.respond(message);
  }

  /** `notifications/cancelled` for `id`: as the SDK's server, with the reason it gave. */
  cancel(id: RequestId, reason: string | undefined): void {
    this.inFlight.get(id)?.abort(reason);
  }

  /** The session closed: every call in flight is cancelled, as the SDK's server aborts its handlers. */
  cancelAll(): void {
    for (const cancel of this.inFlight.values()) cancel.abort();
    this.inFlight.clear();
  }
}

/** The SDK's server checks a `tools/call` result before it answers; the same check, the same error. */
function checkedResult(result: unknown): Record<string, unknown> {
  const checked = CallToolResultSchema.safeParse(result);
  if (!checked.success) {
    throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${checked.error.message}`);
  }
  return checked.data;
}

/** A handler's throw as the SDK's server answers it: its code (or internal error), message and data. */
function errorMessage(id: RequestId, error: unknown): JSONRPCMessage {
  const { code, message, data } = error as { code?: unknown; message?: string; data?: unknown };
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: Number.isSafeInteger(code) ? (code as number) : ErrorCode.InternalError,
      message: message ?? 'Internal error',
      ...(data !== undefined && { data }),
    },
  };
}
