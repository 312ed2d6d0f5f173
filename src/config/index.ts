export * from './config.loader';
export * from './config.module';
export * from './config.schema';
export { NAME_PATTERN } from './schema-helpers';
