import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CancelledNotificationSchema,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { ServerResponse } from 'node:http';
import { type Clock, noop } from '../common';
import { callParamsOf, callToolRequestSchema } from './call-tool-request';
import { DirectCalls } from './direct-calls';
import type { DirectToolCall } from './direct-tool-call';
import type { McpHttpRequest } from './mcp-http-request';
import type { McpAnswers, McpRequestExtra, McpToolCalls } from './mcp-tool-calls.service';
import { SERVER_INFO } from '../mcp-client';

// The SDK builds an ajv instance per server unless given one; a session is cheaper without its own.
let sharedValidator: AjvJsonSchemaValidator | undefined;

/**
 * One MCP session: the SDK's server (the protocol: initialize, ping, cancellation, progress) with
 * Bulkhead's two tool handlers, on the SDK's Streamable HTTP transport (the wire: sessions'
 * headers, protocol versions, JSON or event-stream answers). Its id is made before the
 * `initialize` that opens it, so the session table holds it from the start. Plain `tools/call`
 * requests skip the SDK and go the direct way ({@link DirectCalls}); the SDK still tells them
 * of cancellations and of the session's end.
 */
export class McpSession implements McpAnswers {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  private readonly server: Server;
  private readonly direct: DirectCalls;
  private closed = false;

  constructor(
    readonly id: string,
    tools: McpToolCalls,
    private readonly responses: 'sse' | 'json',
    clock: Clock,
  ) {
    this.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      enableJsonResponse: responses === 'json',
    });
    this.direct = new DirectCalls(id, tools, responses === 'sse', clock);
    // The server, once connected, calls the transport's own callbacks before its own: the messages
    // it accepted (a cancellation may be for a direct call) and its closing.
    this.transport.onmessage = (message) => this.heard(message);
    this.transport.onclose = () => {
      this.closed = true;
      this.direct.cancelAll();
    };
    // `Server`, not `McpServer`: the tools and their JSON Schemas come from the registry, and
    // failures must keep their own JSON-RPC codes (McpServer turns every throw into a result).
    // listChanged: what an upstream MCP server's tools say of themselves may change after start-up.
    this.server = new Server(SERVER_INFO, {
      capabilities: { tools: { listChanged: true } },
      jsonSchemaValidator: (sharedValidator ??= new AjvJsonSchemaValidator()),
    });
    this.server.setRequestHandler(ListToolsRequestSchema, (_request, extra: McpRequestExtra) => ({
      tools: tools.list(extra),
    }));
    this.server.setRequestHandler(callToolRequestSchema, (request, extra: McpRequestExtra) =>
      tools.call(callParamsOf(request), extra, this),
    );
  }

  /** Connects the server to its transport; before the first request. */
  connect(): Promise<void> {
    return this.server.connect(this.transport);
  }

  /** Whether the `initialize` that opened it was accepted (otherwise it never existed). */
  get initialized(): boolean {
    return this.transport.sessionId !== undefined;
  }

  /** Whether a `tools/call` with this id can go the direct way: the session is open and has no call by that id. */
  takesDirectly(id: RequestId): boolean {
    return this.initialized && !this.closed && this.direct.takes(id);
  }

  /** Runs a `tools/call` the direct way, its answer written to `raw`. */
  callDirectly(call: DirectToolCall, caller: McpHttpRequest, raw: ServerResponse): Promise<void> {
    return this.direct.run(call, caller, raw);
  }

  /**
   * The answer of a cancelled request ends at once, since its response will never come: its
   * stream closes, or its JSON answer is `202` (the transport forgets the answer it waited for).
   */
  endCancelled(requestId: McpRequestExtra['requestId'], request: McpHttpRequest): void {
    this.transport.closeSSEStream(requestId);
    if (this.responses === 'json') request.cancelled();
  }

  /** Tells the client the tool list changed (on its listening stream, if it keeps one open). */
  toolsChanged(): void {
    if (this.initialized) this.server.sendToolListChanged().catch(noop);
  }

  /** Ends the session: its streams close and the calls it carries are aborted. */
  close(): Promise<void> {
    return this.server.close();
  }

  /** A message the SDK accepted: a cancellation, checked as the SDK's server checks it, may be for a direct call. */
  private heard(message: JSONRPCMessage): void {
    if (!('method' in message) || message.method !== 'notifications/cancelled') return;
    const cancelled = CancelledNotificationSchema.safeParse(message);
    // The SDK's server ignores a cancellation without a request id (or with id 0) the same way.
    if (cancelled.success && cancelled.data.params.requestId) {
      this.direct.cancel(cancelled.data.params.requestId, cancelled.data.params.reason);
    }
  }
}
