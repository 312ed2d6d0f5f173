// Pinning of upstream MCP tools' definitions (issue 41, item 5): each tool's definition hashed
// when first seen (or pinned in the config), and a tool whose definition changes quarantined
// until an operator approves it. Plain classes and the store seam; the mcp tool kind
// (src/dispatch/tools/mcp) feeds it what the servers list.
export * from './tool-definition-hash';
export * from './definition-diff';
export * from './tool-pin';
export * from './tool-pin.store';
export * from './tool-pins';
export { MemoryToolPinStore } from './memory-tool-pin.store';
export { RedisToolPinStore, TOOL_PIN_KEY_KIND } from './redis-tool-pin.store';
export * from './mcp-pinning.module';
export * from './mcp-pinning.module-definition';
export { McpToolsAdminController, approveBodyObjectSchema, approveBodySchema } from './mcp-tools-admin.controller';
