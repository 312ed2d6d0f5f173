import { Global, Inject, Injectable, type OnApplicationShutdown, Module } from '@nestjs/common';
import type Redis from 'ioredis';
import { BudgetStore, MemoryBudgetStore, RedisBudgetStore } from '../budget';
import { CLOCK, type Clock } from '../common';
import { BULKHEAD_CONFIG, type BulkheadConfig } from '../config';
import { ContainmentStore, MemoryContainmentStore, RedisContainmentStore } from '../containment';
import { IdempotencyStore, MemoryIdempotencyStore, RedisIdempotencyStore } from '../dispatch/idempotency';
import { MemoryRateLimitStore, RateLimitStore, RedisRateLimitStore } from '../rate-limit';
import { createRedisConnection, readyWithin } from './redis-connection';
import { RedisKeys, RedisTime } from './redis-keys';

/** How long start-up waits for Redis before going on without it (readiness stays 503). */
const BOOT_WAIT_MS = 3_000;

/** Injection token of the Redis connection; null with the memory store. */
export const REDIS = Symbol('REDIS');

/** Injection token of the Redis stores' time: Redis `TIME`; tests may put it on their clock. */
export const REDIS_TIME = Symbol('REDIS_TIME');

type Stores = Array<{
  provide: symbol;
  redis: (redis: Redis, keys: RedisKeys, time: RedisTime) => unknown;
  memory: (config: BulkheadConfig, clock: Clock) => unknown;
}>;

/** Every store interface, in memory and in Redis. */
const STORES: Stores = [
  {
    provide: IdempotencyStore,
    redis: (redis, keys, time) => new RedisIdempotencyStore(redis, keys, time),
    memory: (config, clock) => new MemoryIdempotencyStore(clock, config.idempotency.maxEntries),
  },
  {
    provide: ContainmentStore,
    redis: (redis, keys) => new RedisContainmentStore(redis, keys),
    memory: () => new MemoryContainmentStore(),
  },
  {
    provide: RateLimitStore,
    redis: (redis, keys, time) => new RedisRateLimitStore(redis, keys, time),
    memory: (_config, clock) => new MemoryRateLimitStore(clock),
  },
  {
    provide: BudgetStore,
    redis: (redis, keys, time) => new RedisBudgetStore(redis, keys, time),
    memory: (_config, clock) => new MemoryBudgetStore(clock),
  },
];

/** Closes the Redis connection after everything else has stopped. */
@Injectable()
class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis | null) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.redis) return;
    await this.redis.quit().catch(() => this.redis!.disconnect());
  }
}

/**
 * The one seam for shared state: every store interface (idempotency, containment, rate limits,
 * budgets), in memory (the default: one process, nothing to install) or in Redis (several
 * replicas deciding as one), as the config's `store.kind` says.
 */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      useFactory: async (config: BulkheadConfig): Promise<Redis | null> => {
        if (config.store.kind !== 'redis') return null;
        const redis = createRedisConnection({ url: config.store.url, commandTimeoutMs: config.store.commandTimeoutMs });
        await readyWithin(redis, BOOT_WAIT_MS);
        return redis;
      },
      inject: [BULKHEAD_CONFIG],
    },
    RedisCloser,
    { provide: REDIS_TIME, useFactory: () => new RedisTime() },
    ...STORES.map(({ provide, redis, memory }) => ({
      provide,
      useFactory: (config: BulkheadConfig, clock: Clock, connection: Redis | null, time: RedisTime) =>
        connection && config.store.kind === 'redis'
          ? redis(connection, new RedisKeys(config.store.prefix), time)
          : memory(config, clock),
      inject: [BULKHEAD_CONFIG, CLOCK, REDIS, REDIS_TIME],
    })),
  ],
  exports: [REDIS, REDIS_TIME, IdempotencyStore, ContainmentStore, RateLimitStore, BudgetStore],
})
export class StoreModule {}
