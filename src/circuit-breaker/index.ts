export * from './breaker';
export * from './breaker-registry.service';
export * from './breaker-settings';
export * from './circuit-breaker.module';
export * from './circuit-breaker.module-definition';
export * from './breaker.options';
