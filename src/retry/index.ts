export * from './retry-budget';
export * from './retry-policy';
