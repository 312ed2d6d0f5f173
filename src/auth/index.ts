export * from './admin.guard';
export * from './api-key-authenticator';
