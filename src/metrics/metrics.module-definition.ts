import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';

export interface MetricsModuleOptions {
  /**
   * Tenants that may be a `tenant` label; every other tenant is `other`, so the number of
   * series stays bounded by the config. @default []
   */
  tenants?: readonly string[];
  /**
   * Serve `GET /metrics` on this port, on a plain HTTP server of its own, instead of on the
   * app's: scraping then needs no access to the API's port. @default the app's port
   */
  port?: number;
  /** Where that server listens. @default '0.0.0.0' */
  host?: string;
}

export const { ConfigurableModuleClass: MetricsConfigurableModule, MODULE_OPTIONS_TOKEN: METRICS_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<MetricsModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
    .build();
