import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorWire, resolveCallId, ResilienceError } from '../common';
import { callStateOf } from '../common/nest';
import { parseIdempotencyKey } from '../idempotency';
import type { ChatCall } from './chat-call';

/**
 * What every LLM ingress does first: its errors in `wire`'s shape, the call id, the request
 * read by `parse` (into the Chat Completions request the pipeline runs, and the request as it
 * came where targets may be sent that), and the caller.
 */
export function startChatCall(
  request: FastifyRequest,
  reply: FastifyReply,
  wire: ErrorWire,
  parse: (body: unknown) => Pick<ChatCall, 'request' | 'passThrough'>,
): ChatCall {
  const state = callStateOf(request, reply);
  state.errorWire = wire;
  state.callId = resolveCallId(request.headers['x-call-id']);
  void reply.header('x-call-id', state.callId);
  const { request: chat, passThrough } = parse(request.body);
  if (state.tenant === undefined || state.pool === undefined) {
    throw new ResilienceError('unauthorized', 'the call has no authenticated tenant');
  }
  const cacheControl = request.headers['cache-control'];
  return {
    request: chat,
    passThrough,
    callId: state.callId,
    tenant: state.tenant,
    pool: state.pool,
    abort: state.abort,
    cacheControl: typeof cacheControl === 'string' ? cacheControl : undefined,
    headers: reply,
    idempotencyKey: parseIdempotencyKey(request.headers['idempotency-key']),
  };
}
