export * from './redis-connection';
export * from './redis-keys';
export * from './redis-reply';
export * from './redis-script';
export * from './shared-store.provider';
export * from './store.module';
export * from './store.module-definition';
export * from './store.tokens';
