import { askedPriorityOf, PRIORITY_HEADER } from '../bulkhead';
import { type ErrorWire, resolveCallId, ResilienceError } from '../common';
import { callStateOf, type HttpPlatform, type PlatformReply, type PlatformRequest } from '../common/nest';
import { parseIdempotencyKey } from '../idempotency';
import type { ChatCall } from './chat-call';

/** Who calls an LLM ingress and how, whatever it asks: what every such call carries. */
export type IngressCaller = Pick<
  ChatCall,
  'callId' | 'tenant' | 'pool' | 'abort' | 'cacheControl' | 'headers' | 'idempotencyKey' | 'askedPriority'
>;

/** An LLM route's request on either platform: both parse the JSON body. */
export type IngressRequest = PlatformRequest & { readonly body?: unknown };

/**
 * What every LLM ingress does first: its errors in `wire`'s shape, the call id, the request
 * read by `parse` (into the Chat Completions request the pipeline runs, and the request as it
 * came where targets may be sent that), and the caller.
 */
export function startChatCall(
  platform: HttpPlatform,
  request: IngressRequest,
  reply: PlatformReply,
  wire: ErrorWire,
  parse: (body: unknown) => Pick<ChatCall, 'request' | 'passThrough'>,
): ChatCall {
  return startIngressCall(platform, request, reply, wire, parse);
}

/**
 * {@link startChatCall} for any request `parse` reads (the embeddings route's): the fields it
 * returns (a fresh object of its own, which this completes) beside the caller's.
 */
export function startIngressCall<T extends object>(
  platform: HttpPlatform,
  request: IngressRequest,
  reply: PlatformReply,
  wire: ErrorWire,
  parse: (body: unknown) => T,
): T & IngressCaller {
  const state = callStateOf(request, reply);
  state.errorWire = wire;
  state.callId = resolveCallId(request.headers['x-call-id']);
  platform.setHeader(reply, 'x-call-id', state.callId);
  const parsed = parse(request.body);
  if (state.tenant === undefined || state.pool === undefined) {
    throw new ResilienceError('unauthorized', 'the call has no authenticated tenant');
  }
  const cacheControl = request.headers['cache-control'];
  return Object.assign(parsed, {
    callId: state.callId,
    tenant: state.tenant,
    pool: state.pool,
    abort: state.abort,
    cacheControl: typeof cacheControl === 'string' ? cacheControl : undefined,
    headers: platform.headersOf(reply),
    idempotencyKey: parseIdempotencyKey(request.headers['idempotency-key']),
    askedPriority: askedPriorityOf(request.headers[PRIORITY_HEADER]),
  });
}
