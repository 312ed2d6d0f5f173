export * from './mcp.module';
export * from './mcp.module-definition';
export * from './mcp.options';
export { McpSessions } from './mcp-sessions.service';
export { IDEMPOTENCY_KEY_META, McpToolCalls } from './mcp-tool-calls.service';
