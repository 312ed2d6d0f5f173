import { Controller, HttpCode, Module, Post } from '@nestjs/common';
import { Bulkhead } from '../../src/route-policies';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';

/** How long each burst of the saturating loop holds the event loop: three times the threshold. */
const BLOCK_MS = 150;

/**
 * Holds this process's event loop busy for {@link BLOCK_MS} out of every few milliseconds, as a
 * burst of synchronous work would: the service under test shares the loop, so it is saturated
 * for real. Returns the function that stops it.
 */
function saturateEventLoop(): () => void {
  const timer = setInterval(() => {
    const until = performance.now() + BLOCK_MS;
    while (performance.now() < until) {
      // Busy: the loop serves nothing else until the burst ends.
    }
  }, 5);
  return () => clearInterval(timer);
}

/** A company's own routes under `@Bulkhead`: a report that may wait, a checkout that may not. */
@Controller('test/company')
class CompanyController {
  @Post('report')
  @HttpCode(200)
  @Bulkhead('work', { priorityClass: 'sheddable' })
  report() {
    return { report: 'ready' };
  }

  @Post('checkout')
  @HttpCode(200)
  @Bulkhead('work', { priorityClass: 'critical' })
  checkout() {
    return { paid: true };
  }
}

@Module({ controllers: [CompanyController] })
class CompanyModule {}

/**
 * The process overload guard (docs/operations.md, "Overload"): while the event loop runs late,
 * new sheddable calls are refused before admission with 503 `overloaded` and a Retry-After,
 * critical ones still run, readiness stays up, and once the load stops every class is served
 * again. No wall-clock bound: each step waits (generously) for what the guard must come to.
 */
describe('the overload guard', () => {
  let app: TestApp;
  let stopSaturating: (() => void) | undefined;

  beforeAll(async () => {
    app = await createTestApp(
      {
        overload: { enabled: true, eventLoopDelayMs: 50, sampleIntervalMs: 100 },
        lanes: { work: { concurrency: 8, queueCapacity: 64 }, llm: { concurrency: 8, queueCapacity: 64 } },
        llm: { routes: { chat: { lane: 'llm', targets: [{ provider: 'fake', model: 'offline' }] } } },
        tools: {
          batch: { lane: 'work', kind: 'builtin', builtin: 'echo', priorityClass: 'sheddable' },
          interactive: { lane: 'work', kind: 'builtin', builtin: 'echo', priorityClass: 'critical' },
        },
      },
      { imports: [CompanyModule] },
    );
  });

  afterAll(async () => {
    stopSaturating?.();
    await app.close();
  });

  const metrics = async () => parsePromText((await send('GET', `${app.url}/metrics`)).body as string);

  it('serves every class once the loop is on time', async () => {
    // Eventually: building the app and its first requests (modules loaded on first use) hold the
    // loop for a while on a loaded machine, which the guard may rightly see as load.
    await eventually(async () => expect((await invoke(app.url, 'batch', { n: 1 })).status).toBe(200), 120_000);
    expect((await invoke(app.url, 'interactive', { n: 1 })).status).toBe(200);
  });

  it('refuses sheddable calls with 503 overloaded and Retry-After while the loop is saturated, and runs critical ones, on tools and @Bulkhead routes', async () => {
    stopSaturating = saturateEventLoop();
    const refused = await eventually(async () => {
      const answer = await invoke(app.url, 'batch', { n: 2 });
      expect(answer.status).toBe(503);
      return answer;
    }, 120_000);
    expect(refused.body.error).toMatchObject({ kind: 'overloaded', jsonrpcCode: -32015, attempts: 0 });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after-ms'])).toBeGreaterThanOrEqual(100);

    // Concurrent critical calls beside a sheddable flood: every critical one is served.
    const critical = Array.from({ length: 5 }, (_, n) => invoke(app.url, 'interactive', { n }));
    const flood = Array.from({ length: 20 }, (_, n) => invoke(app.url, 'batch', { n }));
    for (const answer of await Promise.all(critical)) expect(answer.status).toBe(200);
    const floodAnswers = await Promise.all(flood);
    expect(floodAnswers.some((answer) => answer.status === 503 && answer.body.error.kind === 'overloaded')).toBe(true);

    // A company's @Bulkhead routes go through the same admission.
    const report = await eventually(async () => {
      const answer = await send('POST', `${app.url}/test/company/report`);
      expect(answer.status).toBe(503);
      return answer;
    }, 120_000);
    expect(report.body.error).toMatchObject({ kind: 'overloaded' });
    expect((await send('POST', `${app.url}/test/company/checkout`)).status).toBe(200);

    // Shedding is no reason to leave the Service: another replica would be no less loaded.
    expect((await send('GET', `${app.url}/health/ready`)).status).toBe(200);
    const prom = await metrics();
    expect(sampleValue(prom, 'bulkhead_overload_state', {})).toBe(1);
    expect(sampleValue(prom, 'bulkhead_overload_refusals_total', { class: 'sheddable' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(prom, 'bulkhead_overload_refusals_total', { class: 'critical' })).toBe(0);
  });

  it('sheds standard calls too, on the LLM routes as on tools, once the loop runs twice its threshold late', async () => {
    const chat = { model: 'chat', messages: [{ role: 'user', content: 'hi' }] };
    const refused = await eventually(async () => {
      const answer = await send('POST', `${app.url}/v1/chat/completions`, { json: chat });
      expect(answer.status).toBe(503);
      return answer;
    }, 120_000);
    // OpenAI's fields, which its SDKs read (and retry on 503).
    expect(refused.body.error).toMatchObject({ kind: 'overloaded', type: 'overloaded', code: 'overloaded' });
    expect(refused.headers['retry-after']).toBeDefined();
    // Anthropic's SDKs read overloaded_error with 529, and retry it.
    const messages = await eventually(async () => {
      const answer = await send('POST', `${app.url}/v1/messages`, { json: { ...chat, max_tokens: 16 } });
      expect(answer.status).toBe(529);
      return answer;
    }, 120_000);
    expect(messages.body).toMatchObject({ type: 'error', error: { type: 'overloaded_error', kind: 'overloaded' } });
    expect(
      sampleValue(await metrics(), 'bulkhead_overload_refusals_total', { class: 'standard' }),
    ).toBeGreaterThanOrEqual(2);
    // Still never a critical call.
    expect((await invoke(app.url, 'interactive', { n: 4 })).status).toBe(200);
  });

  it('serves every class again once the load stops', async () => {
    stopSaturating?.();
    stopSaturating = undefined;
    const chat = { model: 'chat', messages: [{ role: 'user', content: 'hi' }] };
    // Eventually, all at once: a loaded machine may run the loop late again for a moment.
    await eventually(async () => {
      expect(sampleValue(await metrics(), 'bulkhead_overload_state', {})).toBe(0);
      expect((await invoke(app.url, 'batch', { n: 3 })).status).toBe(200);
      expect((await send('POST', `${app.url}/test/company/report`)).status).toBe(200);
      expect((await send('POST', `${app.url}/v1/chat/completions`, { json: chat })).status).toBe(200);
    }, 120_000);
  });
});
