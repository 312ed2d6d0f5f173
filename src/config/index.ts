export * from './bulkhead-config.namespace';
export * from './config.loader';
export * from './config.schema';
export * from './llm.schema';
export { type McpConfig, mcpSchema } from './mcp.schema';
