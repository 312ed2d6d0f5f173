import { Injectable } from '@nestjs/common';
import { askedPriorityOf, type PriorityClass } from '../bulkhead';
import {
  asResilienceError,
  isPromiseLike,
  LazyAbortController,
  NAME_PATTERN,
  ResilienceError,
  resolveCallId,
} from '../common';
import { ContainmentRouter } from '../containment';
import { parseIdempotencyKey } from '../idempotency';
import type { ChatAnswer, ChatCall } from './chat-call';
import { ChatCompletions } from './chat-completions.service';
import { parseChatRequest } from './chat-request';
import type { ChatChunk, ChatRequest } from './chat.types';
import { ChunkQueueSink } from './streaming/chunk-queue-sink';

/** Who a call in the same process is for, and how it may be stopped. */
export interface LlmCallOptions {
  /** The tenant the call runs for: your code vouches for it, as a TenantResolver does. */
  tenant: string;
  /** Stops the call: its provider request is cancelled and its slot freed. */
  signal?: AbortSignal;
  /** At most one provider run per key, as the `Idempotency-Key` header. */
  idempotencyKey?: string;
  /** `no-cache` skips the cache lookup, `no-store` the lookup and the store, as the header. */
  cacheControl?: string;
  /** The call's id in logs and events; generated when absent. */
  callId?: string;
  /** Its class in the route's lane, within the tenant's ceiling (`priority`), as the header; the route's when absent. */
  priority?: PriorityClass;
}

/** A streamed answer in the same process: its chunks, in order; stop reading (break) to cancel it. */
export type LlmChunkStream = AsyncIterable<ChatChunk>;

/**
 * The LLM gateway for a company's own code in the same Nest app (its agent loop): the pipeline
 * of `POST /v1/chat/completions` without HTTP. The tenant's containment gives the pool; then
 * the cache, rate limits, budget per attempt, idempotency, the route's lane, failover and
 * hedging, as for any HTTP caller, in the same metrics and logs. Failures are
 * ResilienceErrors, the same kinds the routes answer with.
 */
@Injectable()
export class LlmGateway {
  constructor(
    private readonly completions: ChatCompletions,
    private readonly containment: ContainmentRouter,
  ) {}

  /** One request (Chat Completions' shape; `model` names a route), answered whole. */
  async complete(request: ChatRequest, options: LlmCallOptions): Promise<ChatAnswer> {
    const call = await this.call(request, options, false);
    try {
      return await this.completions.complete(call);
    } finally {
      call.release();
    }
  }

  /**
   * One request streamed: its chunks as the provider streams them, from the commit point on. A
   * failure before the first chunk is thrown by the first `next()`; one after it by the `next()`
   * that would have read on. Leaving the loop early cancels the call.
   */
  async *stream(request: ChatRequest, options: LlmCallOptions): LlmChunkStream {
    const call = await this.call(request, options, true);
    const sink = new ChunkQueueSink();
    let finished = false;
    const running = this.completions.stream({ ...call, sink }).then(
      () => {
        finished = true;
        sink.end();
      },
      (error: unknown) => {
        finished = true;
        sink.fail(asResilienceError(error));
      },
    );
    try {
      for (;;) {
        const chunk = await sink.next();
        if (!chunk) break;
        yield chunk;
      }
    } finally {
      sink.destroy();
      // Still running: the consumer left early (break, throw).
      if (!finished) call.abort.abort(new ResilienceError('stopped', 'the caller stopped reading the stream'));
      await running;
      call.release();
    }
  }

  private async call(
    request: ChatRequest,
    options: LlmCallOptions,
    stream: boolean,
  ): Promise<ChatCall & { release(): void }> {
    if (!NAME_PATTERN.test(options.tenant)) {
      throw new ResilienceError('invalid_request', 'tenant: must be 1-64 letters, digits, "_", "." or "-"');
    }
    // A whole answer takes no stream options; a stream's are the caller's (the usage chunk).
    const chat = parseChatRequest(stream ? { ...request, stream } : { ...request, stream, stream_options: undefined });
    const routing = this.containment.route({ tenant: options.tenant, known: true });
    const decision = isPromiseLike(routing) ? await routing : routing;
    if (decision.deny) throw new ResilienceError('contained', 'this tenant is contained: no calls are allowed');
    const abort = new LazyAbortController();
    const { signal } = options;
    const onAbort = () => abort.abort(new ResilienceError('stopped', 'the caller stopped the call'));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    return {
      request: chat,
      callId: resolveCallId(options.callId),
      tenant: options.tenant,
      pool: decision.pool,
      abort,
      cacheControl: options.cacheControl,
      idempotencyKey: parseIdempotencyKey(options.idempotencyKey),
      askedPriority: askedPriorityOf(options.priority),
      release: () => signal?.removeEventListener('abort', onAbort),
    };
  }
}
