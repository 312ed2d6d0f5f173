import type { IncomingHttpHeaders } from 'node:http';
import { Agent, request } from 'undici';
import { type Abortable, Lane, type LaneRejection } from '../bulkhead';
import { type Clock, ResilienceError } from '../common';
import type { PoolName } from './containment-decision';
import { type EgressPolicy, egressConnector, type Lookup } from './egress';

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpRequestOptions {
  /** @default 'GET' */
  method?: HttpMethod;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Required: the call's signal (`@CallSignal()`, `ctx.signal`), so abandoned work stops. */
  signal: AbortSignal;
  /** A larger answer fails the request (`transient`) instead of filling memory. @default 1048576 */
  maxResponseBytes?: number;
}

export interface HttpResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The whole body, at most `maxResponseBytes`. */
  body: Buffer;
}

export interface HttpPoolSettings {
  name: PoolName;
  /** Requests in flight at once, 1..4096. */
  maxConcurrency: number;
  /** Longest wait for response headers, and between body chunks; also the longest wait for a permit. */
  timeoutMs: number;
  /** A connection is closed after this long, however busy, so DNS changes are picked up. */
  pooledConnectionLifetimeMs: number;
}

const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/** Requests that may wait for a permit, per permit. */
const QUEUE_PER_PERMIT = 16;

/**
 * One outbound HTTP pool: its own undici Agent (its own sockets, with egress checked at connect
 * time) behind its own concurrency limit, a lane, so the isolated pool's calls can never take
 * the normal pool's permits or sockets. Redirects are never followed.
 */
export class HttpPool {
  readonly name: PoolName;
  private readonly agent: Agent;
  private readonly permits: Lane;

  constructor(
    settings: HttpPoolSettings,
    private readonly egress: EgressPolicy,
    clock: Clock,
    lookup?: Lookup,
  ) {
    const { name, maxConcurrency, timeoutMs, pooledConnectionLifetimeMs } = settings;
    this.name = name;
    this.permits = new Lane({
      name: `http:${name}`,
      concurrency: maxConcurrency,
      queueCapacity: Math.min(maxConcurrency * QUEUE_PER_PERMIT, 100_000),
      queueTtlMs: timeoutMs,
      clock,
    });
    this.agent = new Agent({
      connect: egressConnector(egress, { timeoutMs: Math.min(timeoutMs, 10_000), lookup }),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 10_000,
      clientTtl: pooledConnectionLifetimeMs,
    });
  }

  /** Sends one request through this pool; `egress_denied` before any connection if the URL is not allowed. */
  request(url: string, options: HttpRequestOptions): Promise<HttpResponse> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return Promise.reject(new ResilienceError('invalid_request', 'the outbound URL is not valid'));
    }
    try {
      this.egress.checkUrl(target);
    } catch (error) {
      return Promise.reject(error);
    }
    const admitted = this.permits.run(() => this.send(target, options), { abort: signalAbortable(options.signal) });
    return typeof admitted === 'string' ? Promise.reject(this.refusal(admitted)) : admitted;
  }

  /** Requests in flight now, and the most ever at once: the proof of the cap, not the config. */
  snapshot(): { active: number; peak: number; concurrency: number } {
    const { active, peakActive, concurrency } = this.permits.snapshot();
    return { active, peak: peakActive, concurrency };
  }

  close(): Promise<void> {
    this.permits.close();
    return this.agent.close();
  }

  private async send(target: URL, options: HttpRequestOptions): Promise<HttpResponse> {
    const response = await request(target, {
      dispatcher: this.agent,
      method: options.method ?? 'GET',
      headers: options.headers,
      body: options.body,
      signal: options.signal,
    });
    const { statusCode, headers, body } = response;
    const limit = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > limit) {
        body.destroy();
        throw new ResilienceError('transient', `upstream answer is larger than ${limit} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    return { statusCode, headers, body: Buffer.concat(chunks, size) };
  }

  private refusal(rejection: LaneRejection): ResilienceError {
    if (rejection === 'stopped') return new ResilienceError('stopped', `http pool '${this.name}' is closed`);
    return new ResilienceError('queue_full', `http pool '${this.name}' is full`, { retryAfterMs: 1_000 });
  }
}

/** What a lane needs of an AbortSignal: a request whose caller left leaves the permit queue at once. */
function signalAbortable(signal: AbortSignal): Abortable {
  return {
    get aborted() {
      return signal.aborted;
    },
    get reason() {
      return signal.reason as unknown;
    },
    onAbort(listener) {
      const onAbort = () => listener(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      return () => signal.removeEventListener('abort', onAbort);
    },
    // The caller owns its signal; a pool never aborts it.
    abort() {},
  };
}
