export * from './request';
export * from './schemas';
