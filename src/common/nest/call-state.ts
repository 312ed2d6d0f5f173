import type { ServerResponse } from 'node:http';
import type { ErrorWire } from '../errors/envelope';
import { ResilienceError } from '../errors/resilience-error';
import { LazyAbortController } from '../lazy-abort-controller';
import { nodeResponseOf, type PlatformReply } from './platform';

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
  /** The authenticated tenant, set by the containment guard. */
  tenant?: string;
  /** The HTTP pool this call's outbound requests use, read once from the containment snapshot. */
  pool?: 'normal' | 'isolated';
  /** The tenant is contained (or unknown): `containment: deny` tools refuse it. */
  contained?: boolean;
  /** The wire the route speaks, which its errors follow; else {@link errorWireOf} the request. */
  errorWire?: ErrorWire;
  /** Set once a route policy (lane, breaker) took the call, so a second interceptor applies none again. */
  underPolicy?: boolean;
}

const CALL_STATE = Symbol('bulkhead.callState');
type WithCallState = object & { [CALL_STATE]?: CallState };

/**
 * The call state of this request, created on first use. Creating it starts watching for the
 * client going away: on a POST the request's 'close' fires as soon as the body is read, so the
 * reliable signal is the response closing before it was fully written (docs/pitfalls.md #5).
 * The request and reply are either platform's (Fastify's or Express's): the state is kept on the
 * request object, and the close is watched on the Node response under the reply.
 */
export function callStateOf(request: object, reply: PlatformReply): CallState {
  const holder = request as WithCallState;
  let state = holder[CALL_STATE];
  if (state) return state;
  const abort = new LazyAbortController();
  state = { abort };
  holder[CALL_STATE] = state;
  // One shared listener, the controller kept on the response: no closure per request.
  const response = nodeResponseOf(reply) as WithAbort<ServerResponse>;
  response[CALL_ABORT] = abort;
  response.on('close', abortIfUnfinished);
  return state;
}

const CALL_ABORT = Symbol('bulkhead.callAbort');
type WithAbort<T> = T & { [CALL_ABORT]?: LazyAbortController };

function abortIfUnfinished(this: WithAbort<ServerResponse>): void {
  if (!this.writableEnded) this[CALL_ABORT]?.abort(CLIENT_CLOSED);
}

/** The call state if this request has one; never creates it. */
export function existingCallState(request: object): CallState | undefined {
  return (request as WithCallState)[CALL_STATE];
}

/** Call states by their AbortSignal, so a client given the signal knows whose call it serves. */
const signalOwners = new WeakMap<AbortSignal, CallState>();

/** The call's AbortSignal, registered so that {@link callStateOfSignal} finds the call from it. */
export function callSignalOf(state: CallState): AbortSignal {
  const signal = state.abort.signal;
  signalOwners.set(signal, state);
  return signal;
}

/** The call whose signal this is, if it is one. */
export function callStateOfSignal(signal: AbortSignal | undefined): CallState | undefined {
  return signal ? signalOwners.get(signal) : undefined;
}
