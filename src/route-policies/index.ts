export * from './bulkhead.decorator';
export * from './bulkhead.metadata';
export * from './call-signal.decorator';
export * from './circuit-breaker.decorator';
export * from './circuit-breaker.metadata';
export * from './route-policies.module';
export * from './route-policy.interceptor';
