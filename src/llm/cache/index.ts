export * from './cache-key';
export * from './cacheable';
export * from './coalescer';
export * from './llm-cache.store';
export * from './memory-llm-cache.store';
export * from './redis-llm-cache.store';
export * from './semantic';
