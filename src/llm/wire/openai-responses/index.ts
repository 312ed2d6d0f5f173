export * from './answer';
export * from './request';
export * from './upstream-answer';
export * from './checks';
export * from './stream-events';
