import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';
import type { LlmOptions } from './llm.options';
import type { LlmCacheStore } from './cache/llm-cache.store';

export interface LlmModuleOptions {
  /** The `llm` section of the config file: routes, cache, prices. */
  llm: LlmOptions;
  /**
   * Whether any tenant has a USD budget (`budgets.defaultUsd` or `budgets.tenants`): then every
   * target must have a price, or a budget could not hold its requests.
   */
  budgeted: boolean;
  /** An LlmCacheStore of the app's own (the exact cache), in place of the memory or Redis one StoreModule's connection decides. */
  customCacheStore?: LlmCacheStore;
}

export const { ConfigurableModuleClass: LlmConfigurableModule, MODULE_OPTIONS_TOKEN: LLM_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<LlmModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
    .build();
