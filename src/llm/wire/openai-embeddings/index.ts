export * from './answer';
export * from './request';
