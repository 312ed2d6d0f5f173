import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { callSignalOf, callStateOf } from '../common/nest';

/**
 * Gives a handler the AbortSignal of its call: it fires when the client disconnects before
 * the response is complete, or when shutdown stops the call. Pass it on to every I/O the
 * handler starts, so abandoned work really stops. `TenantHttpClient` also reads from it whose
 * call a request serves, and so which pool it takes. On Fastify and Express alike: the client
 * leaving is seen on the Node response under either platform's reply.
 */
export const CallSignal = createParamDecorator((_data: unknown, context: ExecutionContext): AbortSignal => {
  const http = context.switchToHttp();
  return callSignalOf(callStateOf(http.getRequest<object>(), http.getResponse<object>()));
});
