import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callSignalOf, callStateOf } from '../common/nest';

/**
 * Gives a handler the AbortSignal of its call: it fires when the client disconnects before
 * the response is complete, or when shutdown stops the call. Pass it on to every I/O the
 * handler starts, so abandoned work really stops. `TenantHttpClient` also reads from it whose
 * call a request serves, and so which pool it takes.
 */
export const CallSignal = createParamDecorator((_data: unknown, context: ExecutionContext): AbortSignal => {
  const http = context.switchToHttp();
  return callSignalOf(callStateOf(http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>()));
});
