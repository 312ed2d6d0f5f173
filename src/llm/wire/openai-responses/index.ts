export * from './answer';
export * from './request';
export * from './upstream-answer';
