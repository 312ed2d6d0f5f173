export * from './connection-close.hook';
export * from './lifecycle.module';
export * from './lifecycle.service';
export * from './lifecycle.module-definition';
