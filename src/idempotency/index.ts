export * from './fingerprint';
export * from './idempotency.module';
export * from './idempotency.module-definition';
export * from './idempotency.service';
export * from './idempotency.store';
export * from './memory-idempotency.store';
export * from './redis-idempotency.store';
export * from './stored-outcomes';
