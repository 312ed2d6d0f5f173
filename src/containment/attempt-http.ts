import type { LazyAbortController } from '../common';
import type { HttpPool, HttpRequestOptions, HttpResponse, HttpStreamResponse } from './http-pool';
import { outboundFailure } from './outbound-failure';

/** An attempt's request: as the pool's, but `signal` may be left out (the attempt's own cancellation then). */
export type ToolHttpOptions = Omit<HttpRequestOptions, 'signal'> & { signal?: AbortSignal };

/** The HTTP client of one attempt (a tool's `ctx.http`, an LLM provider's): the call's pool, bound to the attempt. */
export interface ToolHttp {
  request(url: string, options: ToolHttpOptions): Promise<HttpResponse>;
  /**
   * The answer's body as it arrives (a stream of events), stopped with the attempt; the pool's
   * permit is held until the body ends or is destroyed.
   */
  stream(url: string, options: Omit<ToolHttpOptions, 'signal' | 'maxResponseBytes'>): Promise<HttpStreamResponse>;
}

/**
 * `ctx.http`: the call's pool, stopped by the attempt's own cancellation unless the tool hands
 * it a signal; then no AbortSignal needs making for the request at all.
 *
 * Given the `upstream` it reaches for (a tool's `ctx.http`), an upstream that cannot be reached
 * fails as `TenantHttpClient`'s does ({@link outboundFailure}: `transient`, retried, counted);
 * without it (an LLM provider's, which names its failures itself) the pool's errors are as they are.
 */
export class AttemptHttp implements ToolHttp {
  constructor(
    private readonly pool: HttpPool,
    private readonly abort: LazyAbortController,
    private readonly upstream?: string,
  ) {}

  request(url: string, options: ToolHttpOptions): Promise<HttpResponse> {
    const { signal } = options;
    const requesting = signal
      ? this.pool.request(url, { ...options, signal })
      : this.pool.requestAbortable(url, options, this.abort);
    return this.upstream === undefined ? requesting : requesting.catch(this.failed(signal));
  }

  stream(url: string, options: Omit<ToolHttpOptions, 'signal' | 'maxResponseBytes'>): Promise<HttpStreamResponse> {
    const streaming = this.pool.streamAbortable(url, options, this.abort);
    return this.upstream === undefined ? streaming : streaming.catch(this.failed(undefined));
  }

  private failed(signal: AbortSignal | undefined): (error: unknown) => never {
    return (error) => {
      throw outboundFailure(error, this.abort.aborted || signal?.aborted === true, this.upstream!);
    };
  }
}
