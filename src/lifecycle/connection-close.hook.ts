import type { IncomingMessage, Server, ServerResponse } from 'node:http';
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

/**
 * The same on a platform without Fastify's `onSend` hook (Express): a request that arrives while
 * draining is answered with `Connection: close`. Listened for on Node's server, ahead of the
 * platform's own listener, since middleware added once the app is built would run after its
 * routes. A response already under way when the drain starts keeps its keep-alive; the server's
 * close then ends its idle connection.
 */
export function closeConnectionsWhileDrainingOnServer(server: Server, lifecycle: { readonly draining: boolean }): void {
  server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
    if (lifecycle.draining) response.setHeader('connection', 'close');
  });
}
