import { Module } from '@nestjs/common';
import { CommonModule } from '../common/nest';
import { sharedStoreProvider } from '../store';
import { idempotencyBounds } from './idempotency-bounds';
import { IdempotencyService } from './idempotency.service';
import {
  IDEMPOTENCY_MODULE_OPTIONS,
  IdempotencyConfigurableModule,
  type IdempotencyModuleOptions,
} from './idempotency.module-definition';
import { IdempotencyStore } from './idempotency.store';
import { MemoryIdempotencyStore } from './memory-idempotency.store';
import { RedisIdempotencyStore } from './redis-idempotency.store';

/**
 * `Idempotency-Key` for tool calls and LLM requests alike (step 6 of the pipeline): one run per
 * key, joined or replayed. The IdempotencyStore is in Redis when StoreModule holds a connection,
 * in memory (bounded by `idempotency.maxEntries` and its byte bounds) otherwise.
 */
@Module({
  imports: [CommonModule],
  providers: [
    sharedStoreProvider<IdempotencyStore, IdempotencyModuleOptions>(IdempotencyStore, IDEMPOTENCY_MODULE_OPTIONS, {
      own: (options) => options.customStore,
      memory: (options, clock) => new MemoryIdempotencyStore(clock, idempotencyBounds(options.idempotency)),
      redis: ({ connection, keys, time }, options) =>
        new RedisIdempotencyStore(connection, keys, time, idempotencyBounds(options.idempotency)),
    }),
    IdempotencyService,
  ],
  exports: [IdempotencyStore, IdempotencyService],
})
export class IdempotencyModule extends IdempotencyConfigurableModule {}
