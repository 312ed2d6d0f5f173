import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { BreakerSettings } from './breaker-settings';

export interface CircuitBreakerModuleOptions {
  /**
   * Breakers by name, as in the `breakers` section of the config file; `default` holds the
   * settings every breaker starts from.
   */
  breakers: Record<string, Partial<BreakerSettings>>;
}

export const {
  ConfigurableModuleClass: CircuitBreakerConfigurableModule,
  MODULE_OPTIONS_TOKEN: CIRCUIT_BREAKER_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<CircuitBreakerModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
