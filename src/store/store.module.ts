import { Inject, Injectable, Logger, type OnApplicationShutdown, Module } from '@nestjs/common';
import type { RedisClient } from './redis-connection';
import { createRedisConnection, readyWithin } from './redis-connection';
import { RedisKeys, RedisTime } from './redis-keys';
import { STORE_MODULE_OPTIONS, StoreConfigurableModule, type StoreModuleOptions } from './store.module-definition';
import { REDIS, REDIS_KEYS, REDIS_TIME } from './store.tokens';

/** How long start-up waits for Redis before going on without it (readiness stays 503). */
const BOOT_WAIT_MS = 3_000;
const DEFAULT_PREFIX = 'bh:';

/** The connection this module opened itself, which it closes; an app's own client is the app's. */
const OWN_CONNECTION = Symbol('OWN_REDIS_CONNECTION');

/** Closes the Redis connection after everything else has stopped. */
@Injectable()
class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(OWN_CONNECTION) private readonly redis: RedisClient | null) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.redis) return;
    await this.redis.quit().catch(() => this.redis!.disconnect());
  }
}

/** The key prefix of the Redis stores. */
const prefixOf = (options: StoreModuleOptions): string =>
  options.store?.kind === 'redis' ? options.store.prefix : DEFAULT_PREFIX;

/**
 * The one seam for shared state: the Redis connection (opened from `store.url`, or an app's own
 * ioredis client), its key names and its time, or none with `store.kind: memory` (the default:
 * one process, nothing to install). Each feature module makes its own stores on it
 * (`sharedStoreProvider`): in Redis when there is a connection (several replicas deciding as
 * one), in memory otherwise, or the app's own implementation given in that feature's options.
 */
@Module({
  providers: [
    {
      provide: OWN_CONNECTION,
      useFactory: async (options: StoreModuleOptions): Promise<RedisClient | null> => {
        const store = options.store;
        if (options.redis || store?.kind !== 'redis') return null;
        const redis = createRedisConnection(store);
        await readyWithin(redis, BOOT_WAIT_MS);
        return redis;
      },
      inject: [STORE_MODULE_OPTIONS],
    },
    {
      provide: REDIS,
      useFactory: (options: StoreModuleOptions, own: RedisClient | null): RedisClient | null => {
        if (options.redis) warnOfOfflineQueue(options.redis);
        return options.redis ?? own;
      },
      inject: [STORE_MODULE_OPTIONS, OWN_CONNECTION],
    },
    RedisCloser,
    { provide: REDIS_TIME, useFactory: () => new RedisTime() },
    {
      provide: REDIS_KEYS,
      useFactory: (options: StoreModuleOptions) => new RedisKeys(prefixOf(options)),
      inject: [STORE_MODULE_OPTIONS],
    },
  ],
  exports: [REDIS, REDIS_TIME, REDIS_KEYS],
})
export class StoreModule extends StoreConfigurableModule {}

/** A client that queues commands while Redis is down holds decisions instead of failing them. */
function warnOfOfflineQueue(redis: RedisClient): void {
  if (redis.options.enableOfflineQueue !== false) {
    new Logger('Bulkhead').warn(
      'the Redis client given to StoreModule has its offline queue on: while Redis is down, decisions wait instead of failing fast',
    );
  }
}
