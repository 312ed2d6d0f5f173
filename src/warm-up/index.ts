export * from './request-path-warm-up';
