export * from './call-admission';
export * from './redis-call-admission';
