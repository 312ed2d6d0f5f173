import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { RateLimitOptions } from './rate-limit.options';
import type { RateLimitStore } from './rate-limit.store';

export interface RateLimitModuleOptions {
  /** The `rateLimits` section of the config file: per-tenant rpm/tpm, fail mode, enforce. */
  rateLimits: RateLimitOptions;
  /** A RateLimitStore of the app's own, in place of the memory or Redis one StoreModule's connection decides. */
  customStore?: RateLimitStore;
}

export const { ConfigurableModuleClass: RateLimitConfigurableModule, MODULE_OPTIONS_TOKEN: RATE_LIMIT_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<RateLimitModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();
