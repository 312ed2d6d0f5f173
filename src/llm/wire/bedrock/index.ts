export * from './event-stream';
export * from './count-tokens';
export * from './embeddings';
