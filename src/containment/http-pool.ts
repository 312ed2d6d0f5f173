import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Agent } from 'undici';
import { type Abortable, Lane, type LaneRejection } from '../bulkhead';
import { type Clock, noop, ResilienceError } from '../common';
import type { PoolName } from './containment-decision';
import { AgentGenerations } from './agent-generations';
import { type EgressPolicy, egressConnector, type Lookup } from './egress';
import { signalAbortable, UndiciSignal } from './request-signals';

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
  /**
   * How long this request may wait for its answer's headers, and then between body chunks: a
   * caller with a deadline of its own longer than the pool's (a model's answer) sets it.
   * @default the pool's `timeoutMs`
   */
  timeoutMs?: number;
  /**
   * Told once, when the request holds one of the pool's permits and goes out: a request the
   * attempt gave up on while it still waited for a permit never reached the upstream.
   */
  onSend?: () => void;
}

/** A request whose cancellation is given as an {@link Abortable} (an attempt's own) instead of a signal. */
export type AbortableRequestOptions = Omit<HttpRequestOptions, 'signal'>;

/** Where a URL goes, as undici's dispatcher takes it; only URLs the egress rules allow get one. */
interface Destination {
  origin: string;
  path: string;
}

export interface HttpResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The whole body, at most `maxResponseBytes`. */
  body: Buffer;
}

/** An answer whose body is read as it arrives; the pool's permit is held until the body closes. */
export interface HttpStreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /**
   * Read it to its end or destroy it: either frees the permit. The request's cancellation (its
   * signal or attempt) destroys it too. Between chunks it waits at most the request's `timeoutMs`.
   */
  body: Readable;
}

export interface HttpPoolSettings {
  name: PoolName;
  /** Requests in flight at once, 1..4096. */
  maxConcurrency: number;
  /** Longest wait for response headers, and between body chunks; also the longest wait for a permit. */
  timeoutMs: number;
  /** After this long a pool's connections take no new request (its Agent is replaced), so DNS changes are picked up. */
  pooledConnectionLifetimeMs: number;
}

const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/** Allowed URLs kept parsed: a tool's URL is fixed, so a pool sees few; the map is emptied when full. */
const DESTINATIONS_KEPT = 1_024;
/** Requests that may wait for a permit, per permit. */
const QUEUE_PER_PERMIT = 16;

/**
 * One outbound HTTP pool: its own undici Agent (its own sockets, with egress checked at connect
 * time) behind its own concurrency limit, a lane, so the isolated pool's calls can never take
 * the normal pool's permits or sockets. Redirects are never followed.
 */
export class HttpPool {
  readonly name: PoolName;
  private readonly agents: AgentGenerations;
  private readonly permits: Lane;
  private readonly destinations = new Map<string, Destination>();

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
    const connect = egressConnector(egress, { timeoutMs: Math.min(timeoutMs, 10_000), lookup });
    // HTTP/1.1 only (undici 8 would negotiate HTTP/2 over TLS): one request per connection keeps
    // a connection's lifetime, its keep-alive and pooledConnectionLifetimeMs meaning what they say.
    const agentOptions = {
      connect,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 10_000,
      allowH2: false,
    };
    this.agents = new AgentGenerations(() => new Agent(agentOptions), pooledConnectionLifetimeMs, clock);
  }

  /** Sends one request through this pool; `egress_denied` before any connection if the URL is not allowed. */
  request(url: string, options: HttpRequestOptions): Promise<HttpResponse> {
    return this.send(url, options, signalAbortable(options.signal), options.signal);
  }

  /**
   * {@link request}, stopped by `abort` (an attempt's own cancellation) instead of an
   * AbortSignal: on Node 20 making a signal cost more than the rest of the request's own code
   * (on Node 22 about a twentieth of that).
   */
  requestAbortable(url: string, options: AbortableRequestOptions, abort: Abortable): Promise<HttpResponse> {
    return this.send(url, options, abort, new UndiciSignal(abort));
  }

  /**
   * {@link requestAbortable} with the body handed over as it arrives instead of read whole:
   * for answers that are streams (a model's tokens). The permit is held until the body ends or
   * is destroyed, so a stream counts against the pool's cap for as long as it runs; nothing is
   * buffered beyond what the reader has not read yet (the stream's own high-water mark).
   */
  streamAbortable(url: string, options: AbortableRequestOptions, abort: Abortable): Promise<HttpStreamResponse> {
    let destination: Destination;
    try {
      destination = this.destination(url);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      const admitted = this.permits.run(
        () => this.exchangeStream(destination, options, new UndiciSignal(abort), resolve, reject),
        { abort },
      );
      if (typeof admitted === 'string') reject(this.refusal(admitted));
      // Refused while waiting for a permit (expired, aborted): the caller hears it.
      else admitted.catch(reject);
    });
  }

  /** Requests in flight now, and the most ever at once: the proof of the cap, not the config. */
  snapshot(): { active: number; peak: number; concurrency: number } {
    const { active, peakActive, concurrency } = this.permits.snapshot();
    return { active, peak: peakActive, concurrency };
  }

  close(): Promise<void> {
    this.permits.close();
    return this.agents.close();
  }

  private send(
    url: string,
    options: AbortableRequestOptions,
    abort: Abortable,
    signal: AbortSignal | UndiciSignal,
  ): Promise<HttpResponse> {
    let destination: Destination;
    try {
      destination = this.destination(url);
    } catch (error) {
      return Promise.reject(error);
    }
    const admitted = this.permits.run(() => this.exchange(destination, options, signal), { abort });
    return typeof admitted === 'string' ? Promise.reject(this.refusal(admitted)) : admitted;
  }

  /** The URL parsed and checked against the egress rules, once per URL this pool sees. */
  private destination(url: string): Destination {
    const known = this.destinations.get(url);
    if (known) return known;
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new ResilienceError('invalid_request', 'the outbound URL is not valid');
    }
    this.egress.checkUrl(target);
    const destination = { origin: target.origin, path: `${target.pathname}${target.search}` };
    if (this.destinations.size >= DESTINATIONS_KEPT) this.destinations.clear();
    this.destinations.set(url, destination);
    return destination;
  }

  private async exchange(
    destination: Destination,
    options: AbortableRequestOptions,
    signal: AbortSignal | UndiciSignal,
  ): Promise<HttpResponse> {
    options.onSend?.();
    // The dispatcher's own request: undici's top-level request() would parse the URL again.
    const response = await this.agents.get().request({
      origin: destination.origin,
      path: destination.path,
      method: options.method ?? 'GET',
      headers: options.headers,
      body: options.body,
      signal: signal as AbortSignal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    const { statusCode, headers, body } = response;
    const limit = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    return { statusCode, headers, body: await readBody(body, limit) };
  }

  /** Hands the answer over at its headers, and holds the permit (this promise) until its body closes. */
  private async exchangeStream(
    destination: Destination,
    options: AbortableRequestOptions,
    signal: UndiciSignal,
    answered: (response: HttpStreamResponse) => void,
    failed: (error: unknown) => void,
  ): Promise<void> {
    options.onSend?.();
    let response;
    try {
      response = await this.agents.get().request({
        origin: destination.origin,
        path: destination.path,
        method: options.method ?? 'GET',
        headers: options.headers,
        body: options.body,
        signal: signal as unknown as AbortSignal,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
    } catch (error) {
      failed(error);
      return;
    }
    const { statusCode, headers, body } = response;
    const closed = new Promise<void>((done) => body.once('close', done));
    // Errors reach the reader; this listener only keeps an unread body's error from being unhandled.
    body.on('error', noop);
    answered({ statusCode, headers, body });
    await closed;
  }

  private refusal(rejection: LaneRejection): ResilienceError {
    if (rejection === 'stopped') return new ResilienceError('stopped', `http pool '${this.name}' is closed`);
    return new ResilienceError('queue_full', `http pool '${this.name}' is full`, { retryAfterMs: 1_000 });
  }
}

/**
 * The whole body, or `transient` as soon as it grows past `limit` (the rest is not read).
 * Events, not `for await`: an async iterator costs a generator and promises per chunk.
 */
function readBody(body: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      reject(new ResilienceError('transient', `upstream answer is larger than ${limit} bytes`));
      body.destroy();
    });
    body.once('end', () => resolve(Buffer.concat(chunks, size)));
    body.once('error', reject);
  });
}
