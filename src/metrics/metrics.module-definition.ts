import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';

export interface MetricsModuleOptions {
  /**
   * Tenants that may be a `tenant` label; every other tenant is `other`, so the number of
   * series stays bounded by the config. @default []
   */
  tenants?: readonly string[];
}

export const { ConfigurableModuleClass: MetricsConfigurableModule, MODULE_OPTIONS_TOKEN: METRICS_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<MetricsModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
    .build();
