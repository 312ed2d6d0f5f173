export * from './embeddings-call';
export * from './embeddings-cache';
export * from './embeddings-request';
export * from './embeddings.controller';
export * from './embeddings.service';
