import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { PriorityClass } from '../bulkhead';
import type { LazyAbortController } from '../common';
import type { PoolName } from '../containment';

/** Where a request's identity travels through the SDK to the tool handlers: its `authInfo.extra`. */
const REQUEST_KEY = 'io.bulkhead/request';

/**
 * One HTTP request to `/mcp`, as the handlers of the JSON-RPC requests it carries see it: the
 * tenant its API key named and the pool the containment decision gave it (read once, when it
 * arrived, as for any call), whether its client is still there, and how to end its answer.
 */
export class McpHttpRequest {
  private cancelledAnswer: (() => void) | undefined;

  constructor(
    readonly tenant: string,
    readonly pool: PoolName,
    /** The tenant is contained or unknown: `containment: deny` tools are neither listed nor run. */
    readonly contained: boolean,
    /** Aborted when the client closes the connection before its answer is complete. */
    readonly abort: LazyAbortController,
    /** The class its tool calls asked for (`X-Bulkhead-Priority`), before the tenant's ceiling. */
    readonly askedPriority?: PriorityClass,
  ) {}

  /** What the SDK hands the handlers as `extra.authInfo`. */
  toAuthInfo(): AuthInfo {
    return { token: '', clientId: this.tenant, scopes: [], extra: { [REQUEST_KEY]: this } };
  }

  /**
   * Resolves when a request it carries was cancelled: a JSON answer, which would otherwise
   * wait for a response that never comes, then ends with `202 Accepted` and no body.
   */
  whenCancelled(): Promise<void> {
    return new Promise((resolve) => {
      this.cancelledAnswer = resolve;
    });
  }

  /** A request it carries was cancelled (`notifications/cancelled`, or its session closed). */
  cancelled(): void {
    this.cancelledAnswer?.();
  }
}

/** The HTTP request whose `authInfo` this is; undefined for one that did not come through `/mcp`'s route. */
export function mcpHttpRequestOf(authInfo: AuthInfo | undefined): McpHttpRequest | undefined {
  const request = authInfo?.extra?.[REQUEST_KEY];
  return request instanceof McpHttpRequest ? request : undefined;
}
