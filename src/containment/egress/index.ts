export * from './egress-connector';
export * from './egress-policy';
export * from './egress-refusal';
