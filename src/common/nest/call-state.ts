import type { FastifyReply, FastifyRequest } from 'fastify';
import { ResilienceError } from '../errors/resilience-error';
import { LazyAbortController } from '../lazy-abort-controller';

/** The abort reason when the client goes away before its response is complete. */
export const CLIENT_CLOSED = new ResilienceError(
  'stopped',
  'the client closed the connection before the call finished',
);

/** What one HTTP request carries through the call path. */
export interface CallState {
  /** Aborted when the client disconnects or the call is stopped. */
  readonly abort: LazyAbortController;
  /** Set once validated; the error envelope echoes only these. */
  callId?: string;
  toolId?: string;
  /** Set once a route policy (lane, breaker) took the call, so a second interceptor applies none again. */
  underPolicy?: boolean;
}

const CALL_STATE = Symbol('bulkhead.callState');
type WithCallState = FastifyRequest & { [CALL_STATE]?: CallState };

/**
 * The call state of this request, created on first use. Creating it starts watching for the
 * client going away: on a POST the request's 'close' fires as soon as the body is read, so the
 * reliable signal is the response closing before it was fully written (PITFALLS.md 5).
 */
export function callStateOf(request: FastifyRequest, reply: FastifyReply): CallState {
  const holder = request as WithCallState;
  let state = holder[CALL_STATE];
  if (state) return state;
  const abort = new LazyAbortController();
  state = { abort };
  holder[CALL_STATE] = state;
  const response = reply.raw;
  response.once('close', () => {
    if (!response.writableEnded) abort.abort(CLIENT_CLOSED);
  });
  return state;
}

/** The call state if this request has one; never creates it. */
export function existingCallState(request: FastifyRequest): CallState | undefined {
  return (request as WithCallState)[CALL_STATE];
}
