import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { ToolChaosConfig } from '../dispatch';
import type { ChaosOptions } from './chaos.options';

export interface ChaosModuleOptions {
  /**
   * `chaos.enabled`: nothing is injected unless true. BulkheadModule lets it be true only where
   * `BULKHEAD_ALLOW_CHAOS=true` (the config's validation). @default false
   */
  enabled?: ChaosOptions['enabled'];
  /** `tools.<id>.chaos` by tool id; tools left out get none. @default {} */
  tools?: Readonly<Record<string, ToolChaosConfig>>;
}

export const { ConfigurableModuleClass: ChaosConfigurableModule, MODULE_OPTIONS_TOKEN: CHAOS_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<ChaosModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();
