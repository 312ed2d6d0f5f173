export * from './anthropic-messages-reader';
export * from './limits';
export * from './openai-chat-wire';
export * from './token-count';
