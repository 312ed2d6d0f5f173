export * from './egress-connector';
export * from './egress-policy';
