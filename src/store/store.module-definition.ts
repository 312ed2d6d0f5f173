import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { RedisClient } from './redis-connection';
import type { StoreOptions } from './store.options';

export interface StoreModuleOptions {
  /** The `store` section of the config file: memory, or Redis with its URL and key prefix. @default { kind: 'memory' } */
  store?: StoreOptions;
  /**
   * An ioredis client of the app's own, used instead of connecting to `store.url` (Redis
   * stores then, keys under `store.prefix`, default `bh:`). The app keeps it: it is not closed
   * here; a duplicate of it, opened for the containment cache's pub/sub subscription, is closed
   * at shutdown. Make it with `enableOfflineQueue: false` and a short `commandTimeout`, or a
   * Redis outage holds decisions instead of failing them (`createRedisConnection` does both).
   */
  redis?: RedisClient;
}

export const { ConfigurableModuleClass: StoreConfigurableModule, MODULE_OPTIONS_TOKEN: STORE_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<StoreModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();
