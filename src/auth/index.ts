export * from './anonymous-pages';
// The admin routes' guard lives in common/nest, below every module that has admin routes (events too).
export { ADMIN_TOKEN, AdminGuard } from '../common/nest';
export * from './api-key-authenticator';
export * from './api-key-tenant-resolver';
export * from './auth.module';
export * from './auth.module-definition';
export * from './tenant-resolver';
export * from './auth.options';
