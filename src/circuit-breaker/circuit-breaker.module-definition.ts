import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';
import type { BreakerSettings } from './breaker-settings';

export interface CircuitBreakerModuleOptions {
  /**
   * Breakers by name, as in the `breakers` section of the config file; `default` holds the
   * settings every breaker starts from. @default {}
   */
  breakers?: Record<string, Partial<BreakerSettings>>;
}

export const {
  ConfigurableModuleClass: CircuitBreakerConfigurableModule,
  MODULE_OPTIONS_TOKEN: CIRCUIT_BREAKER_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<CircuitBreakerModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
  .build();
