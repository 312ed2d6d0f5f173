export * from './chaos-decider';
export * from './chaos-injection';
export * from './chaos-registry.service';
export * from './chaos.module';
export * from './chaos.module-definition';
export * from './chaos.options';
export * from './chaos.provider';
export * from './tool-chaos';
