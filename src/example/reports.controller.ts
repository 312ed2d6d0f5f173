import { Body, Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
// Only the package's public entry, as in your app: there, `from 'nestjs-bulkhead'`.
import { Bulkhead, CallSignal, CircuitBreaker, CLOCK, type Clock, ResilienceError, sleep } from '..';

/**
 * An example of a company's own controller: copy it. Every route of the class runs in the
 * `general` lane; `render` overrides that with its own lane, so a slow renderer can only ever
 * fill the `render` lane, and a breaker, so a renderer that keeps failing is not called at
 * all for a while. The handler passes its call signal to the work it starts, so a client
 * that disconnects, or a shutdown, really stops it.
 */
@Controller('v1/examples/reports')
@Bulkhead('general')
export class ReportsController {
  constructor(@Inject(CLOCK) private readonly clock: Clock) {}

  /** Stands in for a call to a slow renderer: `{ "ms": n }` is how long it takes. */
  @Post('render')
  @HttpCode(200)
  @Bulkhead('render')
  @CircuitBreaker('render-api')
  async render(@Body() body: { ms?: unknown } | undefined, @CallSignal() signal: AbortSignal) {
    const ms = body?.ms ?? 100;
    if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > 60_000) {
      throw new ResilienceError('schema', 'ms must be an integer from 0 to 60000');
    }
    // In a real controller: `await this.http.request(url, { ..., signal })`.
    await sleep(this.clock, ms, signal);
    return { rendered: true, tookMs: ms };
  }

  @Get('summary')
  summary() {
    return { reports: 0 };
  }
}
