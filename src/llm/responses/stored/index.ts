export * from './memory-stored-responses.store';
export * from './redis-stored-responses.store';
export * from './stored-responses.service';
export * from './stored-responses.store';
