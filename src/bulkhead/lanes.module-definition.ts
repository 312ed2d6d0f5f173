import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';
import type { LaneSettings } from './lane.options';
import type { PriorityOptions } from './priority-policy';

export interface LanesModuleOptions {
  /** Lanes by name, as in the `lanes` section of the config file. */
  lanes: Record<string, LaneSettings>;
  /** Who may ask for which class with `X-Bulkhead-Priority`, as in the `priority` section of the config file. @default nobody past standard */
  priority?: PriorityOptions;
}

export const { ConfigurableModuleClass: LanesConfigurableModule, MODULE_OPTIONS_TOKEN: LANES_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<LanesModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
    .build();
