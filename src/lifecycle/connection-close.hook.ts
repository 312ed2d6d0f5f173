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
 * The same on a platform without Fastify's `onSend` hook (Express), on Node's server, ahead of the
 * platform's own listener (middleware added once the app is built would run after its routes): a
 * request that arrives while draining is answered with `Connection: close`, and the returned
 * function, called when the drain starts, puts it on every response not yet begun.
 */
export function closeConnectionsWhileDrainingOnServer(
  server: Server,
  lifecycle: { readonly draining: boolean },
): () => void {
  const unanswered = new Set<ServerResponse>();
  // One listener for every response, not a closure each.
  function answered(this: ServerResponse): void {
    unanswered.delete(this);
  }
  server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
    if (lifecycle.draining) {
      response.setHeader('connection', 'close');
      return;
    }
    unanswered.add(response);
    response.once('close', answered);
  });
  return () => {
    for (const response of unanswered) if (!response.headersSent) response.setHeader('connection', 'close');
  };
}
