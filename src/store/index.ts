export * from './redis-connection';
export * from './redis-keys';
export * from './redis-script';
export * from './store.module';
export * from './store.module-definition';
