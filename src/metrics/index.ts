export * from './metric-names';
export * from './metrics-registry.provider';
export * from './metrics.module';
export * from './metrics.module-definition';
export * from './metrics-server';
