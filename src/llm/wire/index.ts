export * from './anthropic-messages';
export * from './bedrock';
export * from './limits';
export * from './openai-chat';
export * from './openai-embeddings';
export * from './openai-responses';
export * from './sse';
export * from './token-count';
