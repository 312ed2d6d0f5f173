import { Injectable } from '@nestjs/common';
import { callStateOfSignal } from '../common/nest';
import type { HttpRequestOptions, HttpResponse } from './http-pool';
import { HttpPools } from './http-pools.service';
import { outboundFailure } from './outbound-failure';

/**
 * Outbound HTTP for a company's controllers: each request goes through the pool chosen for
 * the calling tenant when its call began (normal, or isolated when contained or unknown).
 * Pass the route's `@CallSignal()` signal: it stops the request when the call stops, and it
 * says whose call this is. There is no fallback to any other client: a request without a
 * call's signal is treated as having no session and goes to the isolated pool.
 *
 * An upstream that cannot be reached (DNS, refused, reset, TLS, a timeout) fails with
 * `transient` (502 on the route, and a failure to its breaker), as an http tool's does, not
 * with the socket's own error (which Nest would answer 500, with its stack in the log).
 */
@Injectable()
export class TenantHttpClient {
  constructor(private readonly pools: HttpPools) {}

  async request(url: string, options: HttpRequestOptions): Promise<HttpResponse> {
    // Plain JavaScript may leave the signal out: no session, so the isolated pool, and nothing stops it.
    const given = options.signal instanceof AbortSignal ? options : { ...options, signal: NEVER_ABORTED };
    const pool = callStateOfSignal(given.signal)?.pool ?? 'isolated';
    try {
      return await this.pools.get(pool).request(url, given);
    } catch (error) {
      throw outboundFailure(error, given.signal.aborted, 'the upstream of an outbound request');
    }
  }
}

/** The signal of a request given none: it never fires. */
const NEVER_ABORTED = new AbortController().signal;
