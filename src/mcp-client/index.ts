// The client side of MCP: Bulkhead calling upstream MCP servers (tools of `kind: mcp`). Plain
// classes, no Nest and nothing of dispatch, so the tool kind can use them without a cycle; the
// session table and the name Bulkhead gives itself are shared with the server side (src/mcp).
export { UpstreamAnswerEnded, UpstreamAnswerTooLarge, type UpstreamCall } from './upstream-call';
export { readToolResult, UpstreamResultInvalid } from './upstream-result';
export { McpUpstream, type PoolSource, type SessionKey, type UpstreamTool } from './mcp-upstream';
export { TENANT_SESSION_LIMITS, type TenantSessionLimits } from './tenant-sessions';
export { McpUpstreams } from './mcp-upstreams';
export { McpSessionTable, SessionEntry, type SessionLimits } from './mcp-session-table';
export { SERVER_INFO } from './server-info';
export { LISTEN_IDLE_MS } from './pool-fetch';
export { UPSTREAM_IDEMPOTENCY_META, type UpstreamEndpoint, UpstreamSession } from './upstream-session';
