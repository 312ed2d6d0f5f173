import { seededRandom } from '../../src/common';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { track } from '../support/deferred';
import { eventually } from '../support/eventually';
import { type Response, send } from '../support/http-client';
import { parsePromText, sampleValue, samplesOf } from '../support/prom-text';
import { getEvents } from '../support/service-reads';
import { streamChat, streamedText } from '../support/sse';

const ALLOW = { BULKHEAD_ALLOW_CHAOS: 'true' };
const PRIMARY = 'llm.chat/fake/primary';
const QUESTION = 'tell me about bulkheads in ships and software';

/**
 * Issue 15, item 5: chaos per LLM target. The primary target is made to fail as a provider
 * would; the route must retry it, fail over to the secondary and count what was injected, all
 * in virtual time.
 */
describe('chaos injected into LLM target attempts, over HTTP in virtual time', () => {
  let clock: FakeClock;
  let current: TestApp | undefined;

  beforeEach(() => {
    clock = new FakeClock();
    process.env.BULKHEAD_ALLOW_CHAOS = 'true';
  });

  afterEach(async () => {
    await closeOnFakeClock(current, clock);
    current = undefined;
    delete process.env.BULKHEAD_ALLOW_CHAOS;
  });

  /** Route `chat`: fake `primary` with `chaos`, then fake `secondary`; two attempts each, 0 ms backoff, no cache. */
  async function service(chaos: Record<string, unknown>, enabled = true): Promise<TestApp> {
    current = await createTestApp(
      {
        lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
        chaos: { enabled },
        llm: {
          routes: {
            chat: {
              lane: 'llm',
              cache: false,
              retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
              targets: [
                { provider: 'fake', model: 'primary', chaos },
                { provider: 'fake', model: 'secondary' },
              ],
            },
          },
        },
      },
      { clock, random: seededRandom(5), env: ALLOW },
    );
    return current;
  }

  const ask = (app: TestApp, callId: string) =>
    send('POST', `${app.url}/v1/chat/completions`, {
      json: { model: 'chat', messages: [{ role: 'user', content: QUESTION }] },
      headers: { 'x-call-id': callId },
    });

  /** The answer to `pending`, firing timers that fall due (0 ms backoffs) without moving time. */
  async function withoutMovingTime<T>(pending: Promise<T>): Promise<T> {
    const answer = track(pending);
    while (answer.state === 'pending') await clock.advanceAsync(0);
    return pending;
  }

  async function prom(app: TestApp) {
    return parsePromText((await send('GET', `${app.url}/metrics`)).body as string);
  }

  async function injected(app: TestApp, kind: string): Promise<number | undefined> {
    return sampleValue(await prom(app), 'bulkhead_chaos_injected_total', { target: PRIMARY, kind });
  }

  function servedBy(response: Pick<Response, 'headers'>): string | undefined {
    return response.headers['x-bulkhead-served-by'] as string | undefined;
  }

  it('fails over to the second target when every attempt at the first is overloaded, and counts each', async () => {
    const app = await service({ faultRate: 1, faultKind: 'overloaded' });

    const answer = await withoutMovingTime(ask(app, 'chat-1'));

    expect(answer.status).toBe(200);
    expect(answer.body.choices[0].message.content).toBe(QUESTION);
    expect(servedBy(answer)).toBe('fake/secondary');
    expect(answer.headers['x-bulkhead-attempts']).toBe('3');
    const metrics = await prom(app);
    expect(sampleValue(metrics, 'bulkhead_chaos_injected_total', { target: PRIMARY, kind: 'overloaded' })).toBe(2);
    const attempts = (target: string, outcome: string) =>
      sampleValue(metrics, 'bulkhead_llm_requests_total', { route: 'chat', target, outcome });
    expect(attempts('fake/primary', 'transient')).toBe(2);
    expect(attempts('fake/secondary', 'ok')).toBe(1);
    expect(sampleValue(metrics, 'bulkhead_llm_failovers_total', { route: 'chat' })).toBe(1);
    // The primary's breaker counted both, as it would a real 503.
    expect((await send('GET', `${app.url}/v1/circuits`)).body.circuits['llm.chat.0'].failures).toBe(2);
  });

  it('puts each injection in the ledger as a line of the target, beside the request’s own line', async () => {
    const app = await service({ faultRate: 1, faultKind: 'server_error' });
    await withoutMovingTime(ask(app, 'chat-2'));

    const events = await getEvents(app.url);

    const line = { callId: '', toolId: PRIMARY, lane: 'llm', tenant: '', status: 'chaos_server_error' };
    expect(events.filter((event) => event.status.startsWith('chaos_'))).toEqual([
      expect.objectContaining(line),
      expect.objectContaining(line),
    ]);
    expect(events.find((event) => event.callId === 'chat-2')).toMatchObject({ toolId: 'llm.chat', status: 'ok' });
  });

  it('waits out a rate_limited fault’s Retry-After on the clock before trying the target again', async () => {
    const app = await service({ faultRate: 1, faultKind: 'rate_limited', retryAfterMs: 2_000 });
    const answer = track(ask(app, 'chat-3'));
    await eventually(async () => expect(await injected(app, 'rate_limited')).toBe(1));

    await clock.advanceAsync(1_999);
    expect(await injected(app, 'rate_limited')).toBe(1);
    expect(answer.state).toBe('pending');

    await clock.advanceAsync(1);
    await eventually(() => expect(answer.state).toBe('fulfilled'));
    expect(servedBy(answer.value!)).toBe('fake/secondary');
    expect(await injected(app, 'rate_limited')).toBe(2);
  });

  it('cuts a streamed answer after its first content: past the commit point, the client sees the cut', async () => {
    const app = await service({ faultRate: 1, faultKind: 'stream_cut' });

    const answer = await withoutMovingTime(
      streamChat(app.url, { model: 'chat', messages: [{ role: 'user', content: QUESTION }] }),
    );

    expect(answer.status).toBe(200);
    expect(servedBy(answer)).toBe('fake/primary');
    expect(answer.done).toBe(false);
    expect(answer.chunks.at(-1)?.error).toMatchObject({ kind: 'transient' });
    const text = streamedText(answer.chunks.slice(0, -1));
    expect(text.length).toBeGreaterThan(0);
    expect(text.length).toBeLessThan(QUESTION.length);
    expect(QUESTION.startsWith(text)).toBe(true);
    expect(await injected(app, 'stream_cut')).toBe(1);
  });

  it('injects nothing while chaos.enabled is false: the first target serves', async () => {
    const app = await service({ faultRate: 1, faultKind: 'overloaded' }, false);

    const answer = await withoutMovingTime(ask(app, 'chat-4'));

    expect(answer.status).toBe(200);
    expect(servedBy(answer)).toBe('fake/primary');
    expect(answer.headers['x-bulkhead-attempts']).toBe('1');
    expect(samplesOf(await prom(app), 'bulkhead_chaos_injected_total')).toEqual([]);
    expect((await getEvents(app.url)).filter((event) => event.status.startsWith('chaos_'))).toEqual([]);
  });
});
