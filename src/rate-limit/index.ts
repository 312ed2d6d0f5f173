export * from './memory-rate-limit.store';
export * from './rate-limit.store';
export * from './redis-rate-limit.store';
export * from './token-bucket';
export * from './rate-limit.module';
export * from './rate-limiter.service';
export * from './rate-limit.module-definition';
export * from './rate-limit.options';
