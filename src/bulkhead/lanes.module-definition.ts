import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';
import type { LaneSettings } from './lane.options';

export interface LanesModuleOptions {
  /** Lanes by name, as in the `lanes` section of the config file. */
  lanes: Record<string, LaneSettings>;
}

export const { ConfigurableModuleClass: LanesConfigurableModule, MODULE_OPTIONS_TOKEN: LANES_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<LanesModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
    .build();
