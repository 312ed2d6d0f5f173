import type { Clock } from '../common';
import { McpUpstream, type PoolSource } from './mcp-upstream';
import type { UpstreamEndpoint } from './upstream-session';

/**
 * The upstream MCP servers of a registry, one per URL and headers: tool entries naming the same
 * server share it, its sessions and its listing.
 */
export class McpUpstreams {
  private readonly servers = new Map<string, McpUpstream>();

  constructor(
    private readonly pools: PoolSource,
    private readonly clock: Clock,
  ) {}

  /** The server `endpoint` names, made on first use. */
  serverFor(endpoint: UpstreamEndpoint): McpUpstream {
    const headers = Object.entries(endpoint.headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const key = JSON.stringify([endpoint.url, headers]);
    const known = this.servers.get(key);
    if (known) {
      known.widen(endpoint.timeoutMs);
      return known;
    }
    const server = new McpUpstream(endpoint, this.pools, this.clock);
    this.servers.set(key, server);
    return server;
  }

  all(): McpUpstream[] {
    return [...this.servers.values()];
  }

  /** Ends every server's sessions (their DELETEs go out through the pools, which must still be open). */
  async close(): Promise<void> {
    await Promise.all(this.all().map((server) => server.close()));
  }
}
