import { Module } from '@nestjs/common';
import { CommonModule } from '../common/nest';
import { sharedStoreProvider } from '../store';
import { MemoryRateLimitStore } from './memory-rate-limit.store';
import { RateLimitStore } from './rate-limit.store';
import {
  RATE_LIMIT_MODULE_OPTIONS,
  RateLimitConfigurableModule,
  type RateLimitModuleOptions,
} from './rate-limit.module-definition';
import { RedisRateLimitStore } from './redis-rate-limit.store';
import { RateLimiter } from './rate-limiter.service';

/**
 * Per-tenant rate limits (step 4 of the pipeline); the RateLimitStore is in Redis when
 * StoreModule holds a connection, in memory otherwise.
 */
@Module({
  imports: [CommonModule],
  providers: [
    sharedStoreProvider<RateLimitStore, RateLimitModuleOptions>(RateLimitStore, RATE_LIMIT_MODULE_OPTIONS, {
      own: (options) => options.customStore,
      memory: (_options, clock) => new MemoryRateLimitStore(clock),
      redis: ({ connection, keys, time }) => new RedisRateLimitStore(connection, keys, time),
    }),
    RateLimiter,
  ],
  exports: [RateLimitStore, RateLimiter],
})
export class RateLimitModule extends RateLimitConfigurableModule {}
