// Framework-free: mechanisms import from here. Nest and Fastify adapters are in ./nest.
export * from './awaitable';
export * from './call-id';
export * from './call-log-line';
export * from './clock';
export * from './deferred';
export * from './errors/envelope';
export * from './errors/error-kinds';
export * from './errors/reported-failures';
export * from './errors/resilience-error';
export * from './errors/stop-reason';
export * from './errors/upstream-errors';
export * from './lazy-abort-controller';
export * from './lease';
export * from './random';
export * from './tenant';
export * from './unique-id';
export * from './json-depth';
