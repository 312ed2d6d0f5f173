import { ConfigurableModuleBuilder } from '@nestjs/common';

export interface LifecycleModuleOptions {
  /** How long accepted calls may finish after shutdown starts. @default 10000 */
  shutdownDrainMs?: number;
  /**
   * What an unhandled rejection does once `installProcessSafetyNet` listens: `serve` keeps
   * serving, `drain` drains and exits 1. @default 'serve'
   */
  onUnhandledRejection?: 'serve' | 'drain';
}

export const { ConfigurableModuleClass: LifecycleConfigurableModule, MODULE_OPTIONS_TOKEN: LIFECYCLE_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<LifecycleModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();
