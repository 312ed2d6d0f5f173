export * from './config.loader';
export * from './config.module';
export * from './config.schema';
