export * from './abortable';
export * from './bulkhead.module';
export * from './bulkhead.module-definition';
export * from './lane';
export * from './lane.types';
export * from './lane-registry.service';
export * from './lane-rejection';
