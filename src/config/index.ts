export * from './bulkhead-config.namespace';
export * from './config.loader';
export * from './config.schema';
export * from './egress-warnings';
