export * from './admin.guard';
export * from './api-key-authenticator';
export * from './api-key-tenant-resolver';
export * from './auth.module';
export * from './auth.module-definition';
export * from './tenant-resolver';
