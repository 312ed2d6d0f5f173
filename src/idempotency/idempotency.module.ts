import { Module } from '@nestjs/common';
import { CommonModule } from '../common/nest';
import { sharedStoreProvider } from '../store';
import { IdempotencyService } from './idempotency.service';
import {
  IDEMPOTENCY_MODULE_OPTIONS,
  IdempotencyConfigurableModule,
  type IdempotencyModuleOptions,
} from './idempotency.module-definition';
import { IdempotencyStore } from './idempotency.store';
import { MemoryIdempotencyStore } from './memory-idempotency.store';
import { RedisIdempotencyStore } from './redis-idempotency.store';

const DEFAULT_MAX_ENTRIES = 10_000;

/**
 * `Idempotency-Key` for tool calls and LLM requests alike (step 6 of the pipeline): one run per
 * key, joined or replayed. The IdempotencyStore is in Redis when StoreModule holds a connection,
 * in memory (bounded by `idempotency.maxEntries`) otherwise.
 */
@Module({
  imports: [CommonModule],
  providers: [
    sharedStoreProvider<IdempotencyStore, IdempotencyModuleOptions>(IdempotencyStore, IDEMPOTENCY_MODULE_OPTIONS, {
      own: (options) => options.customStore,
      memory: (options, clock) =>
        new MemoryIdempotencyStore(clock, options.idempotency?.maxEntries ?? DEFAULT_MAX_ENTRIES),
      redis: ({ connection, keys, time }) => new RedisIdempotencyStore(connection, keys, time),
    }),
    IdempotencyService,
  ],
  exports: [IdempotencyStore, IdempotencyService],
})
export class IdempotencyModule extends IdempotencyConfigurableModule {}
