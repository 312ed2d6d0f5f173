import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';
import type { McpConfig } from '../config';

export interface McpModuleOptions {
  /** The `mcp` section of the config file: sessions' bounds, response mode, progress interval. */
  mcp?: Partial<McpConfig>;
}

export const { ConfigurableModuleClass: McpConfigurableModule, MODULE_OPTIONS_TOKEN: MCP_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<McpModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
    .build();

/** What `mcp` is when the options leave it out: the config file's defaults. */
export const DEFAULT_MCP: McpConfig = {
  maxSessions: 1_000,
  maxSessionsPerTenant: 100,
  sessionIdleMs: 1_800_000,
  responses: 'sse',
  progressIntervalMs: 1_000,
  allowedOrigins: [],
  allowedHosts: [],
};
