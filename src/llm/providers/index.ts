export * from './anthropic.provider';
export * from './fake.provider';
export * from './llm-provider';
export * from './openai.provider';
export * from './provider-errors';
export * from './provider-registry';
export * from './provider-wrappers';
