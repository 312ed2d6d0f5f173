import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { ToolConfig } from '../config';

export interface DispatchModuleOptions {
  /** Tools by id, as in the `tools` section of the config file. */
  tools: Record<string, ToolConfig>;
}

export const { ConfigurableModuleClass: DispatchConfigurableModule, MODULE_OPTIONS_TOKEN: DISPATCH_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<DispatchModuleOptions>().setClassMethodName('forRoot').build();
