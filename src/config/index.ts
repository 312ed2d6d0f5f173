export * from './bulkhead-config.namespace';
export * from './config.loader';
export * from './config.schema';
