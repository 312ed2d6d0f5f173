import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';
import type { ToolPinStore } from './tool-pin.store';

export interface McpPinningModuleOptions {
  /** A ToolPinStore of the app's own, in place of the memory or Redis one StoreModule's connection decides. */
  customStore?: ToolPinStore;
}

export const {
  ConfigurableModuleClass: McpPinningConfigurableModule,
  MODULE_OPTIONS_TOKEN: MCP_PINNING_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<McpPinningModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
  .build();
