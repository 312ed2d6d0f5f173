import { track } from '../../test/support/deferred';
import { noNetwork, providerAttempt } from '../../test/support/provider-attempt';
import { rejection } from '../../test/support/rejection';
import { LazyAbortController, ResilienceError } from '../common';
import { FakeClock } from '../common/fake-clock';
import type { ChatChunk, ChatRequest } from '../llm/chat.types';
import { FakeProvider } from '../llm/providers/fake.provider';
import { isProviderFailure } from '../llm/providers/provider-errors';
import { ChaosDecider, type ChaosSettings } from './chaos-decider';
import type { ChaosInjection } from './chaos-injection';
import { ChaosProvider, type LlmFaultKind } from './chaos.provider';

const TARGET = { provider: 'fake', model: 'fake-1' };
const REQUEST: ChatRequest = {
  model: 'fake-1',
  messages: [{ role: 'user', content: 'a question long enough to stream in several chunks' }],
};
const NAME = 'llm.chat/fake/fake-1';

describe('ChaosProvider', () => {
  let clock: FakeClock;
  let injected: ChaosInjection[];
  let real: FakeProvider;

  beforeEach(() => {
    clock = new FakeClock();
    injected = [];
    real = new FakeProvider(undefined, clock);
  });

  function provider(settings: ChaosSettings<LlmFaultKind>, retryAfterMs?: number): ChaosProvider {
    return new ChaosProvider(
      real,
      { name: NAME, lane: 'llm', retryAfterMs },
      new ChaosDecider(settings, () => 0.5),
      clock,
      (item) => injected.push(item),
    );
  }

  const attempt = (abort = new LazyAbortController()) => providerAttempt(TARGET, REQUEST, { http: noNetwork, abort });

  async function chunksOf(stream: AsyncIterable<ChatChunk>): Promise<{ chunks: ChatChunk[]; error?: unknown }> {
    const chunks: ChatChunk[] = [];
    try {
      for await (const chunk of stream) chunks.push(chunk);
      return { chunks };
    } catch (error) {
      return { chunks, error };
    }
  }

  it('keeps the name of the provider it wraps', () => {
    expect(provider({}).name).toBe('fake');
  });

  it('passes attempts through untouched when nothing is drawn', async () => {
    const completion = await provider({ faultRate: 0.2, faultKind: 'server_error' }).complete(attempt());

    expect(completion.choices[0].message.content).toBe(REQUEST.messages[0].content);
    expect(injected).toEqual([]);
  });

  it.each<[LlmFaultKind, number, string, number | undefined]>([
    ['overloaded', 503, 'overloaded', undefined],
    ['server_error', 500, 'upstream_error', undefined],
    ['rate_limited', 429, 'rate_limited', 1_000],
  ])('fails %s as the provider answering %d would: transient, code %s', async (fault, status, code, retryAfterMs) => {
    const error = await rejection(provider({ faultRate: 1, faultKind: fault }).complete(attempt()));

    expect(isProviderFailure(error)).toBe(true);
    expect(error).toMatchObject({ kind: 'transient', code, upstreamStatus: status, retryAfterMs });
    expect((error as Error).message).toMatch(/^target fake\/fake-1 answered \d{3}: .* \(injected by chaos\)$/);
    expect(injected).toEqual([{ target: NAME, kind: fault, lane: 'llm' }]);
  });

  it('gives a rate_limited fault the Retry-After of its settings', async () => {
    const error = await rejection(provider({ faultRate: 1, faultKind: 'rate_limited' }, 7_500).complete(attempt()));

    expect(error).toMatchObject({ code: 'rate_limited', retryAfterMs: 7_500 });
  });

  it('fails a streamed attempt before its first chunk, as a failed request would', async () => {
    const { chunks, error } = await chunksOf(provider({ faultRate: 1, faultKind: 'overloaded' }).stream(attempt()));

    expect(chunks).toEqual([]);
    expect(error).toMatchObject({ kind: 'transient', code: 'overloaded' });
  });

  it('delays the request by latencyMs of the clock, then answers', async () => {
    const answer = track(provider({ latencyRate: 1, latencyMs: 4_000 }).complete(attempt()));

    await clock.advanceAsync(3_999);
    expect(answer.state).toBe('pending');
    await clock.advanceAsync(1);

    expect(answer.state).toBe('fulfilled');
    expect(injected).toEqual([{ target: NAME, kind: 'latency', lane: 'llm' }]);
  });

  it('ends the delay when the attempt is aborted, with its reason', async () => {
    const abort = new LazyAbortController();
    const answer = track(provider({ latencyRate: 1, latencyMs: 4_000 }).complete(attempt(abort)));
    await clock.advanceAsync(1_000);

    const reason = new ResilienceError('timeout', 'target fake/fake-1 did not answer within 1000 ms');
    abort.abort(reason);
    await clock.advanceAsync(0);

    expect(answer).toMatchObject({ state: 'rejected', reason });
    expect(clock.pendingTimers).toBe(0);
  });

  it('never answers a timeout fault until the attempt is aborted', async () => {
    const abort = new LazyAbortController();
    const answer = track(provider({ faultRate: 1, faultKind: 'timeout' }).complete(attempt(abort)));

    await clock.advanceAsync(3_600_000);
    expect(answer.state).toBe('pending');

    const reason = new ResilienceError('timeout', 'target fake/fake-1 did not answer within 1000 ms');
    abort.abort(reason);
    await clock.advanceAsync(0);
    expect(answer).toMatchObject({ state: 'rejected', reason });
    expect(injected.map((item) => item.kind)).toEqual(['timeout']);
  });

  it('cuts a stream right after its first content, as a dropped connection would', async () => {
    // Another fake, so that the answer cut is its first as well (a fake counts its attempts).
    const whole = await chunksOf(new FakeProvider(undefined, clock).stream(attempt()));
    const { chunks, error } = await chunksOf(provider({ faultRate: 1, faultKind: 'stream_cut' }).stream(attempt()));

    const firstContent = whole.chunks.findIndex((chunk) => Boolean(chunk.choices[0]?.delta.content));
    expect(firstContent).toBeGreaterThanOrEqual(0);
    expect(whole.chunks.length).toBeGreaterThan(firstContent + 2);
    expect(chunks).toEqual(whole.chunks.slice(0, firstContent + 1));
    expect(error).toMatchObject({ kind: 'transient', code: 'stream_cut' });
    expect((error as Error).message).toMatch(/\(injected by chaos\)$/);
    expect(injected).toEqual([{ target: NAME, kind: 'stream_cut', lane: 'llm' }]);
  });

  it('leaves a completion that is not streamed alone under stream_cut, and counts nothing', async () => {
    const completion = await provider({ faultRate: 1, faultKind: 'stream_cut' }).complete(attempt());

    expect(completion.choices[0].message.content).toBe(REQUEST.messages[0].content);
    expect(injected).toEqual([]);
  });
});
