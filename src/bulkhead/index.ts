export * from './abortable';
export * from './lanes.module';
export * from './lanes.module-definition';
export * from './lane';
export * from './lane.types';
export * from './lane-registry.service';
export * from './lane-rejection';
