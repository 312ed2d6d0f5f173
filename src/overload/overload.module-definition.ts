import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { OverloadOptions } from './overload.options';

export interface OverloadModuleOptions {
  /** The `overload` section of the config file. @default off (`enabled: false`), with its measured thresholds */
  overload?: OverloadOptions;
}

// Global: admitCall's callers (tool calls, LLM routes, @Bulkhead routes) find the guard without importing it.
export const { ConfigurableModuleClass: OverloadConfigurableModule, MODULE_OPTIONS_TOKEN: OVERLOAD_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<OverloadModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();
