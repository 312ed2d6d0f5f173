export * from './event-stream';
export * from './embeddings';
