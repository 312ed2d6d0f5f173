import { ConfigurableModuleBuilder } from '@nestjs/common';

export interface LaneSettings {
  concurrency: number;
  queueCapacity: number;
  queueTtlMs?: number;
  maxQueuedPerTenant?: number;
}

export interface BulkheadModuleOptions {
  /** Lanes by name, as in the `lanes` section of the config file. */
  lanes: Record<string, LaneSettings>;
}

export const { ConfigurableModuleClass: BulkheadConfigurableModule, MODULE_OPTIONS_TOKEN: BULKHEAD_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<BulkheadModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();
