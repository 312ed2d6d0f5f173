import { Injectable } from '@nestjs/common';
import { callStateOfSignal } from '../common/nest';
import type { HttpRequestOptions, HttpResponse } from './http-pool';
import { HttpPools } from './http-pools.service';

/**
 * Outbound HTTP for a company's controllers: each request goes through the pool chosen for
 * the calling tenant when its call began (normal, or isolated when contained or unknown).
 * Pass the route's `@CallSignal()` signal: it stops the request when the call stops, and it
 * says whose call this is. There is no fallback to any other client: a request without a
 * call's signal is treated as having no session and goes to the isolated pool.
 */
@Injectable()
export class TenantHttpClient {
  constructor(private readonly pools: HttpPools) {}

  request(url: string, options: HttpRequestOptions): Promise<HttpResponse> {
    const pool = callStateOfSignal(options.signal)?.pool ?? 'isolated';
    return this.pools.get(pool).request(url, options);
  }
}
