export * from './bulkhead-config.namespace';
export { BUILT_IN_RESET_TIMEOUT_MS } from './breaker-merge-problems';
export * from './config.loader';
export * from './config.schema';
export { NAME_PATTERN } from '../common';
export * from './llm.schema';
export { type McpConfig, mcpSchema } from './mcp.schema';
