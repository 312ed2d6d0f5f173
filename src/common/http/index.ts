export * from './call-state';
export * from './envelope-exception.filter';
export * from './http-exception-mapping';
