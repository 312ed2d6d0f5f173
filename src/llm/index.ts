export * from './chat.types';
export {
  chatRequestSchema,
  countTokensRequestSchema,
  embeddingsRequestSchema,
  messagesRequestSchema,
  responsesRequestSchema,
} from './wire';
export * from './chat-completions.service';
export * from './llm-gateway.service';
export * from './llm.module';
export * from './llm.module-definition';
export * from './llm.options';
export * from './providers/target-chaos.options';
export * from './llm-outcomes';
export * from './providers/llm-provider';
export * from './providers/provider-wrappers';
export { LlmCacheStore } from './cache/llm-cache.store';
export { MemoryLlmCacheStore } from './cache/memory-llm-cache.store';
export { RedisLlmCacheStore } from './cache/redis-llm-cache.store';
export * from './providers/provider-errors';
export { carriesContent } from './streaming/stream-assembly';
