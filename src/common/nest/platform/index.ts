// One adapter per HTTP platform: what Bulkhead does with a request or a reply.
export * from './http-platform';
export * from './fastify-platform';
export * from './express-platform';
export * from './platform-of';
