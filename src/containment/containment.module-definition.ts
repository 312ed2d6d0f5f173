import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';
import type { ContainmentOptions } from './containment.options';
import type { ContainmentStore } from './containment.store';

export interface ContainmentModuleOptions {
  /** The `containment` section of the config file: default posture, the two pools, egress rules. */
  containment: ContainmentOptions;
  /**
   * Tenants the app vouches for, seeded `not_contained` at start so they use the normal pool
   * until an operator says otherwise (the API keys' tenants). @default []
   */
  tenants?: readonly string[];
  /** A ContainmentStore of the app's own, in place of the memory or Redis one StoreModule's connection decides. */
  customStore?: ContainmentStore;
}

export const {
  ConfigurableModuleClass: ContainmentConfigurableModule,
  MODULE_OPTIONS_TOKEN: CONTAINMENT_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<ContainmentModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
  .build();
