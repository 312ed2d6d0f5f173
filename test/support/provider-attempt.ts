import { LazyAbortController, SystemClock } from '../../src/common';
import type { PoolName } from '../../src/containment/containment-decision';
import { EgressPolicy } from '../../src/containment/egress';
import { HttpPool, type HttpResponse, type HttpStreamResponse } from '../../src/containment/http-pool';
import type { ToolHttp, ToolHttpOptions } from '../../src/containment/attempt-http';
import type { ChatRequest } from '../../src/llm/chat.types';
import type { ProviderAttempt, ProviderTarget } from '../../src/llm/providers/llm-provider';

/**
 * A real HTTP pool that may reach loopback (and nothing the egress rules would refuse
 * elsewhere), for providers tested against servers on 127.0.0.1.
 */
export function loopbackPool(): HttpPool {
  return new HttpPool(
    { name: 'normal' as PoolName, maxConcurrency: 8, timeoutMs: 10_000, pooledConnectionLifetimeMs: 60_000 },
    new EgressPolicy({ allowHosts: ['*'], allowPrivateCidrs: ['127.0.0.0/8'] }),
    new SystemClock(),
  );
}

/** The pool bound to one attempt as the attempt runner binds it: its own abort unless given a signal. */
export function attemptHttp(pool: HttpPool, abort: LazyAbortController): ToolHttp {
  return {
    request(url: string, options: ToolHttpOptions): Promise<HttpResponse> {
      const { signal } = options;
      return signal ? pool.request(url, { ...options, signal }) : pool.requestAbortable(url, options, abort);
    },
    stream(url: string, options: ToolHttpOptions): Promise<HttpStreamResponse> {
      return pool.streamAbortable(url, options, abort);
    },
  };
}

/** One attempt at `target`, with its own abort controller to stop it with. */
export function providerAttempt(
  target: ProviderTarget,
  request: ChatRequest,
  options: {
    http?: ToolHttp;
    pool?: HttpPool;
    maxOutputTokens?: number;
    abort?: LazyAbortController;
    timeoutMs?: number;
  } = {},
): ProviderAttempt & { abort: LazyAbortController } {
  const abort = options.abort ?? new LazyAbortController();
  const http = options.http ?? (options.pool ? attemptHttp(options.pool, abort) : noNetwork);
  return {
    target,
    request,
    maxOutputTokens: options.maxOutputTokens ?? 256,
    http,
    signal: abort.signal,
    timeoutMs: options.timeoutMs ?? 30_000,
    abort,
  };
}

/** A client that fails the test if anything uses it: for providers that must stay offline. */
export const noNetwork: ToolHttp = {
  request(url: string): Promise<HttpResponse> {
    throw new Error(`unexpected network request to ${url}`);
  },
  stream(url: string): Promise<HttpStreamResponse> {
    throw new Error(`unexpected network request to ${url}`);
  },
};
