export * from './answer';
export * from './checks';
export * from './request';
export * from './stop-reasons';
export * from './stream-events';
