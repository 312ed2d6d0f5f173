import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCRequest, type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { UpstreamCall } from './upstream-call';

/** The JSON-RPC id at the end of a request the SDK sends (`{...request, jsonrpc, id}`, in that order). */
const TRAILING_ID = /"id":(\d{1,15})\}$/;

/** A call's request on its way: the call, and the JSON-RPC id its answer will carry. */
export interface RoutedCall {
  readonly call: UpstreamCall;
  readonly id: number;
}

/**
 * The SDK's Streamable HTTP transport, told which call the next request belongs to: the SDK
 * client calls `send` in the same turn as `callTool`, so the call handed over just before is
 * that request's. `callOf` then finds it again, by its id, from the request the transport's
 * `fetch` gets. No async context is kept: an AsyncLocalStorage would turn on promise hooks for
 * every promise of the process (in a benchmark, a fifth of a call's CPU).
 */
export class CallRoutingTransport extends StreamableHTTPClientTransport {
  private handing: UpstreamCall | undefined;
  private readonly calls = new Map<number, UpstreamCall>();

  /** Runs `request` (the SDK client's `callTool`), whose HTTP request is `call`'s. */
  sendFor<T>(call: UpstreamCall, request: () => Promise<T>): Promise<T> {
    this.handing = call;
    try {
      return request();
    } finally {
      // Not taken (the SDK awaited before sending): the request takes the session's way.
      this.handing = undefined;
    }
  }

  override async send(message: JSONRPCMessage | JSONRPCMessage[], options?: TransportSendOptions): Promise<void> {
    const call = this.handing;
    this.handing = undefined;
    if (!call || Array.isArray(message) || !isJSONRPCRequest(message) || typeof message.id !== 'number') {
      return super.send(message, options);
    }
    const { id } = message;
    this.calls.set(id, call);
    try {
      await super.send(message, options);
    } finally {
      this.calls.delete(id);
    }
  }

  /** The call whose POST body is `body`, while its HTTP request is being made. */
  callOf(body: string | undefined): RoutedCall | undefined {
    if (body === undefined || this.calls.size === 0) return undefined;
    const id = TRAILING_ID.exec(body.slice(-24))?.[1];
    const call = id === undefined ? undefined : this.calls.get(Number(id));
    return call && { call, id: Number(id) };
  }

  /** A message the upstream sent on a call's answer before the result: to the client as the SDK would. */
  receive(message: unknown): void {
    let parsed: JSONRPCMessage;
    try {
      parsed = JSONRPCMessageSchema.parse(message);
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    this.onmessage?.(parsed);
  }
}
