import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { IdempotencyOptions } from './idempotency.options';
import type { IdempotencyStore } from './idempotency.store';

export interface IdempotencyModuleOptions {
  /**
   * How long outcomes are replayed, and the stores' bounds (each key left out takes its default).
   * @default { retentionMs: 60000, maxEntries: 10000, maxBytes: 64 MiB, maxBytesPerTenant: 16 MiB, maxEntryBytes: 1 MiB }
   */
  idempotency?: Partial<IdempotencyOptions>;
  /** An IdempotencyStore of the app's own, in place of the memory or Redis one StoreModule's connection decides. */
  customStore?: IdempotencyStore;
}

export const {
  ConfigurableModuleClass: IdempotencyConfigurableModule,
  MODULE_OPTIONS_TOKEN: IDEMPOTENCY_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<IdempotencyModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
