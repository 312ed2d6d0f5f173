import type { FactoryProvider, InjectionToken } from '@nestjs/common';
import type { RedisClient } from './redis-connection';
import { CLOCK, type Clock } from '../common';
import type { RedisKeys, RedisTime } from './redis-keys';
import { REDIS, REDIS_KEYS, REDIS_TIME } from './store.tokens';

/** What a Redis store is built on: StoreModule's connection, key names and time. */
export interface RedisStoreBase {
  readonly connection: RedisClient;
  readonly keys: RedisKeys;
  readonly time: RedisTime;
}

/** How a feature makes its store, given its module's options. */
export interface StoreMakers<T, O> {
  /** The app's own implementation, when the options give one: it replaces both of ours. */
  own(options: O): T | undefined;
  memory(options: O, clock: Clock): T;
  /** `extra` holds the values of the provider's extra injection tokens, in order. */
  redis(base: RedisStoreBase, options: O, ...extra: unknown[]): T;
}

/**
 * The provider of one feature's store: the app's own when the feature's options give one, else
 * the Redis store when StoreModule holds a connection, else the memory store. Each feature module
 * lists its own stores this way, so StoreModule knows connections and nothing of the features.
 */
export function sharedStoreProvider<T, O>(
  provide: InjectionToken,
  optionsToken: InjectionToken,
  makers: StoreMakers<T, O>,
  extraInject: InjectionToken[] = [],
): FactoryProvider<T> {
  return {
    provide,
    useFactory: (
      options: O,
      clock: Clock,
      connection: RedisClient | null,
      keys: RedisKeys,
      time: RedisTime,
      ...extra
    ) => {
      const own = makers.own(options);
      if (own) return own;
      if (!connection) return makers.memory(options, clock);
      return makers.redis({ connection, keys, time }, options, ...extra);
    },
    inject: [optionsToken, CLOCK, REDIS, REDIS_KEYS, REDIS_TIME, ...extraInject],
  };
}
