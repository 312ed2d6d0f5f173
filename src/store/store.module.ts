import { Inject, Injectable, Logger, type OnApplicationShutdown, Module } from '@nestjs/common';
import type Redis from 'ioredis';
import { BudgetStore, MemoryBudgetStore, RedisBudgetStore } from '../budget';
import { CLOCK, type Clock, SystemClock } from '../common';
import { CommonModule } from '../common/nest';
import {
  ContainmentCache,
  containmentChannel,
  ContainmentStore,
  MemoryContainmentStore,
  RedisContainmentStore,
  RedisInvalidations,
  SUBSCRIBER_CONNECTION_OPTIONS,
} from '../containment';
import { IdempotencyStore, MemoryIdempotencyStore, RedisIdempotencyStore } from '../idempotency';
import { LlmCacheStore, MemoryLlmCacheStore, RedisLlmCacheStore } from '../llm/cache';
import { MemoryRateLimitStore, RateLimitStore, RedisRateLimitStore } from '../rate-limit';
import { createRedisConnection, readyWithin } from './redis-connection';
import { RedisKeys, RedisTime } from './redis-keys';
import {
  type CustomStores,
  STORE_MODULE_OPTIONS,
  StoreConfigurableModule,
  type StoreModuleOptions,
} from './store.module-definition';

/** How long start-up waits for Redis before going on without it (readiness stays 503). */
const BOOT_WAIT_MS = 3_000;
const DEFAULT_PREFIX = 'bh:';
const DEFAULT_IDEMPOTENCY_ENTRIES = 10_000;
const DEFAULT_LLM_CACHE = { maxEntries: 10_000, maxBytes: 64 * 1024 * 1024 };

/** Injection token of the Redis connection; null with the memory store. */
export const REDIS = Symbol('REDIS');

/** Injection token of the Redis stores' time: Redis `TIME`; tests may put it on their clock. */
export const REDIS_TIME = Symbol('REDIS_TIME');

/**
 * The containment snapshots' invalidations (a subscriber connection of their own, duplicated from
 * the decision connection) that keep the Redis containment store's cache live; null with the
 * memory store or an app's own containment store.
 */
const CONTAINMENT_INVALIDATIONS = Symbol('CONTAINMENT_INVALIDATIONS');

type Stores = Array<{
  provide: symbol;
  custom: keyof CustomStores;
  redis: (redis: Redis, keys: RedisKeys, time: RedisTime, invalidations: RedisInvalidations | null) => unknown;
  memory: (options: StoreModuleOptions, clock: Clock) => unknown;
}>;

/** Every store interface, in memory and in Redis. */
const STORES: Stores = [
  {
    provide: IdempotencyStore,
    custom: 'idempotency',
    redis: (redis, keys, time) => new RedisIdempotencyStore(redis, keys, time),
    memory: (options, clock) =>
      new MemoryIdempotencyStore(clock, options.idempotencyMaxEntries ?? DEFAULT_IDEMPOTENCY_ENTRIES),
  },
  {
    provide: ContainmentStore,
    custom: 'containment',
    redis: (redis, keys, _time, invalidations) => new RedisContainmentStore(redis, keys, invalidations?.cache),
    memory: () => new MemoryContainmentStore(),
  },
  {
    provide: RateLimitStore,
    custom: 'rateLimit',
    redis: (redis, keys, time) => new RedisRateLimitStore(redis, keys, time),
    memory: (_options, clock) => new MemoryRateLimitStore(clock),
  },
  {
    provide: BudgetStore,
    custom: 'budget',
    redis: (redis, keys, time) => new RedisBudgetStore(redis, keys, time),
    memory: (_options, clock) => new MemoryBudgetStore(clock),
  },
  {
    provide: LlmCacheStore,
    custom: 'llmCache',
    redis: (redis, keys) => new RedisLlmCacheStore(redis, keys),
    memory: (options, clock) => new MemoryLlmCacheStore(clock, options.llmCache ?? DEFAULT_LLM_CACHE),
  },
];

/** The connection this module opened itself, which it closes; an app's own client is the app's. */
const OWN_CONNECTION = Symbol('OWN_REDIS_CONNECTION');

/** Closes the Redis connection after everything else has stopped. */
@Injectable()
class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(OWN_CONNECTION) private readonly redis: Redis | null) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.redis) return;
    await this.redis.quit().catch(() => this.redis!.disconnect());
  }
}

/** Closes the containment invalidations' subscriber connection (only that one: it is always ours). */
@Injectable()
class InvalidationsCloser implements OnApplicationShutdown {
  constructor(@Inject(CONTAINMENT_INVALIDATIONS) private readonly invalidations: RedisInvalidations | null) {}

  onApplicationShutdown(): void {
    this.invalidations?.close();
  }
}

/** The key prefix of the Redis stores. */
const prefixOf = (options: StoreModuleOptions): string =>
  options.store?.kind === 'redis' ? options.store.prefix : DEFAULT_PREFIX;

/**
 * The one seam for shared state: every store interface (idempotency, containment, rate limits,
 * budgets), in memory (the default: one process, nothing to install) or in Redis (several
 * replicas deciding as one), as `store.kind` says; an app may pass its own ioredis client or
 * its own implementation of any store.
 */
@Module({
  imports: [CommonModule],
  providers: [
    {
      provide: OWN_CONNECTION,
      useFactory: async (options: StoreModuleOptions): Promise<Redis | null> => {
        const store = options.store;
        if (options.redis || store?.kind !== 'redis') return null;
        const redis = createRedisConnection({ url: store.url, commandTimeoutMs: store.commandTimeoutMs });
        await readyWithin(redis, BOOT_WAIT_MS);
        return redis;
      },
      inject: [STORE_MODULE_OPTIONS],
    },
    {
      provide: REDIS,
      useFactory: (options: StoreModuleOptions, own: Redis | null): Redis | null => {
        if (options.redis) warnOfOfflineQueue(options.redis);
        return options.redis ?? own;
      },
      inject: [STORE_MODULE_OPTIONS, OWN_CONNECTION],
    },
    RedisCloser,
    {
      provide: CONTAINMENT_INVALIDATIONS,
      useFactory: (options: StoreModuleOptions, connection: Redis | null): RedisInvalidations | null => {
        if (options.stores?.containment || !connection) return null;
        // Pings on real time whatever clock the app runs on: a dead link is a real-time matter.
        return new RedisInvalidations(connection.duplicate(SUBSCRIBER_CONNECTION_OPTIONS), new ContainmentCache(), {
          channel: containmentChannel(new RedisKeys(prefixOf(options))),
          clock: new SystemClock(),
        });
      },
      inject: [STORE_MODULE_OPTIONS, REDIS],
    },
    InvalidationsCloser,
    { provide: REDIS_TIME, useFactory: () => new RedisTime() },
    ...STORES.map(({ provide, custom, redis, memory }) => ({
      provide,
      useFactory: (
        options: StoreModuleOptions,
        clock: Clock,
        connection: Redis | null,
        time: RedisTime,
        invalidations: RedisInvalidations | null,
      ) => {
        const own = options.stores?.[custom];
        if (own) return own;
        if (!connection) return memory(options, clock);
        return redis(connection, new RedisKeys(prefixOf(options)), time, invalidations);
      },
      inject: [STORE_MODULE_OPTIONS, CLOCK, REDIS, REDIS_TIME, CONTAINMENT_INVALIDATIONS],
    })),
  ],
  exports: [REDIS, REDIS_TIME, IdempotencyStore, ContainmentStore, RateLimitStore, BudgetStore, LlmCacheStore],
})
export class StoreModule extends StoreConfigurableModule {}

/** A client that queues commands while Redis is down holds decisions instead of failing them. */
function warnOfOfflineQueue(redis: Redis): void {
  if (redis.options.enableOfflineQueue !== false) {
    new Logger('Bulkhead').warn(
      'the Redis client given to StoreModule has its offline queue on: while Redis is down, decisions wait instead of failing fast',
    );
  }
}
