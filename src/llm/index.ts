export * from './chat.types';
export * from './chat-completions.service';
export * from './llm.module';
export * from './llm.module-definition';
export * from './llm-outcomes';
export * from './providers/llm-provider';
export * from './cache/llm-cache.store';
