import type { FastifyInstance } from 'fastify';

/**
 * While draining, every response says `Connection: close`, so keep-alive clients move to
 * another replica instead of sending their next request into a closing server.
 */
export function closeConnectionsWhileDraining(
  fastify: FastifyInstance,
  lifecycle: { readonly draining: boolean },
): void {
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (lifecycle.draining) void reply.header('connection', 'close');
    done(null, payload);
  });
}
