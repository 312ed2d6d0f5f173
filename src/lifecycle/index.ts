export * from './connection-close.hook';
export * from './lifecycle.module';
export * from './lifecycle.service';
export * from './lifecycle.module-definition';
export * from './process-safety-net';
export * from './process-shutdown';
export * from './unexpected-error';
export * from './unexpected-errors';
