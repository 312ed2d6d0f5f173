import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';
import { type McpOptions, mcpSchema } from './mcp.options';

export interface McpModuleOptions {
  /** The `mcp` section of the config file: sessions' bounds, response mode, progress interval. */
  mcp?: Partial<McpOptions>;
}

export const { ConfigurableModuleClass: McpConfigurableModule, MODULE_OPTIONS_TOKEN: MCP_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<McpModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
    .build();

/** What `mcp` is when the options leave it out: the config file's defaults, read from its schema. */
export const DEFAULT_MCP: McpOptions = mcpSchema.parse(undefined);
