import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callStateOf } from '../common/nest';

/**
 * Gives a handler the AbortSignal of its call: it fires when the client disconnects before
 * the response is complete, or when shutdown stops the call. Pass it on to every I/O the
 * handler starts, so abandoned work really stops.
 */
export const CallSignal = createParamDecorator((_data: unknown, context: ExecutionContext): AbortSignal => {
  const http = context.switchToHttp();
  return callStateOf(http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>()).abort.signal;
});
