export * from './retry-budget';
export * from './retry-policy';
export * from './retry-context';
export * from './retry.options';
