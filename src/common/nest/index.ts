// Nest and HTTP-platform adapters of common/: the module, the envelope filter, per-request call state.
export * from './admin.guard';
export * from './call-state';
export * from './request-viewer';
export * from './common.module';
export * from './envelope-exception.filter';
export * from './http-exception-mapping';
export * from './framework-errors';
export * from './client-errors';
export * from './connection-limits';
export * from './unexpected-errors';
export * from './refusal-log';
export * from './without-tenant.decorator';
export * from './own-origin-policy.decorator';
export * from './route-cache';
export * from './module-extras';
export * from './platform';
export * from './json-depth-limit';
