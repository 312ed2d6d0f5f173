import { type BudgetGate, MemoryBudgetStore, microsToUsd } from '../../budget';
import { Breaker, type BreakerSettings } from '../../circuit-breaker';
import { LazyAbortController, ResilienceError, seededRandom } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import type { FakeStepConfig } from '../llm.options';
import { MemoryRateLimitStore, RateLimiter } from '../../rate-limit';
import { track } from '../../../test/support/deferred';
import {
  CALM,
  type TestRouteOptions,
  testRoute,
  type TestTarget,
  testTarget,
  routingInVirtualTime,
  specPool,
} from '../../../test/support/llm-routes';
import {
  dailyBudgetGate,
  fakePrices,
  LARGE_WORST_MICROS,
  OUTPUT_TOKENS as OUTPUT_CAP,
  SMALL_WORST_MICROS,
  admittedAccount,
} from '../../../test/support/llm-accounting';
import type { ChatChunk, ChatRequest } from '../chat.types';
import type { Price } from '../pricing';
import type { FailoverCall, FailoverProgress } from './attempt-race';
import { serveWithFailover } from './failover';
import type { LlmRoute, LlmTarget } from './llm-route';
import type { CommittedStream } from './provider-attempt';

// Hedges and streams of serveWithFailover (AttemptRace), in virtual time as in failover.spec.ts:
// the route, the fake providers, the budget and the rate limit run on one FakeClock; opossum's
// open → half-open timer runs on jest's fake timers.

const SEED = 42;
const TPM = 60_000;
const HEDGE_AFTER_MS = 300;
const IDLE_MS = 30_000;

const { SMALL, LARGE } = fakePrices();

const REQUEST: ChatRequest = { model: 'chat', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 500 };

/** 48 characters without a space: the fake provider streams it in three content chunks of 16. */
const TEXT = 'x'.repeat(16) + 'y'.repeat(16) + 'z'.repeat(16);

const routing = routingInVirtualTime();
let clock: FakeClock;
let gate: BudgetGate;
let limiter: RateLimiter;
let breakers: Breaker[];
const pool = specPool(4);

beforeEach(() => {
  ({ clock, breakers } = routing);
  gate = dailyBudgetGate(new MemoryBudgetStore(clock), clock);
  limiter = new RateLimiter(new MemoryRateLimitStore(clock), {
    rateLimits: { tenants: { acme: { tpm: TPM } }, failMode: 'closed', enforce: true },
  });
});

function target(
  model: string,
  script: FakeStepConfig[],
  options: { price?: Price; breaker?: Partial<BreakerSettings> } = {},
): TestTarget {
  const price = options.price ?? (model === 'large' ? LARGE : SMALL);
  return testTarget(clock, breakers, model, script, { ...options, price });
}

function route(targets: TestTarget[], options: Omit<TestRouteOptions, 'idleTimeoutMs'> = {}): LlmRoute {
  return testRoute(targets, OUTPUT_CAP, { ...options, idleTimeoutMs: IDLE_MS });
}

/** Starts one request through the route; its outcome is tracked, never left unhandled. */
function serve(subject: LlmRoute, options: { deliver?: FailoverCall['deliver']; abort?: LazyAbortController } = {}) {
  const abort = options.abort ?? new LazyAbortController();
  const progress: FailoverProgress = { attempts: 0, failovers: 0, tried: [], hedges: [], choices: [] };
  const account = admittedAccount('acme', gate, limiter, clock);
  const promise = serveWithFailover(clock, seededRandom(SEED), {
    route: subject,
    request: REQUEST,
    pool,
    abort,
    account,
    progress,
    deliver: options.deliver,
  });
  return { outcome: track(promise), progress, abort, account };
}

/** A client that reads each stream it is given to its end; `fail` makes it fail at once instead. */
function reader(fail?: ResilienceError) {
  const deliveries: Array<{ head: ChatChunk[]; target: LlmTarget; read: ChatChunk[] }> = [];
  const deliver = async ({ head, stream }: CommittedStream, to: LlmTarget): Promise<void> => {
    const delivery = { head: head.flatMap((batch) => batch.chunks), target: to, read: [] as ChatChunk[] };
    deliveries.push(delivery);
    if (fail) throw fail;
    for (;;) {
      const batch = await stream.next(IDLE_MS);
      if (!batch) return;
      delivery.read.push(...batch.chunks);
    }
  };
  return { deliver, deliveries };
}

function tried(progress: FailoverProgress): Array<[string, string]> {
  return progress.tried.map(({ target: which, outcome }) => [which.label, outcome]);
}

function callTimes(subject: TestTarget): number[] {
  return subject.provider.calls.map((call) => call.at);
}

function contents(chunks: ChatChunk[]): Array<string | null | undefined> {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content);
}

async function budget(): Promise<{ spentUsd: number; reservedUsd: number }> {
  const { spentUsd, reservedUsd } = await gate.view('acme');
  return { spentUsd, reservedUsd };
}

function money(spentMicros: number, reservedMicros: number): { spentUsd: number; reservedUsd: number } {
  return { spentUsd: microsToUsd(spentMicros), reservedUsd: microsToUsd(reservedMicros) };
}

/** 800 tokens in and 100 out: 2 400 µ$ at fake/small, 11 000 µ$ at fake/large. */
const answer = (text: string): FakeStepConfig => ({ text, usage: { promptTokens: 800, completionTokens: 100 } });
const slow = (delayMs: number, text = 'late'): FakeStepConfig => ({ ...answer(text), delayMs });
const refused: FakeStepConfig = { status: 400 };
/** What an attempt stopped after its prompt was sent costs: the input estimate, 1 000 tokens. */
const STOPPED_SMALL_MICROS = 2_000;
const STOPPED_LARGE_MICROS = 10_000;

describe('serveWithFailover: hedging', () => {
  it('starts a hedge at hedgeAfterMs and not a millisecond before, at the next target, and serves its answer', async () => {
    const first = target('small', [slow(5_000)]);
    const second = target('large', [answer('from the hedge')]);
    const call = serve(route([first, second], { hedgeAfterMs: HEDGE_AFTER_MS }));

    await clock.advanceAsync(HEDGE_AFTER_MS - 1);
    expect(second.provider.calls).toHaveLength(0);
    expect(call.outcome.state).toBe('pending');

    await clock.advanceAsync(1);
    expect(callTimes(second)).toEqual([HEDGE_AFTER_MS]);
    expect(call.outcome.value).toMatchObject({ target: second, hedged: true });
    expect(call.outcome.value?.completion.choices[0].message.content).toBe('from the hedge');
    expect(call.progress).toMatchObject({ attempts: 2, failovers: 0, hedges: ['won'] });
  });

  it('cancels the slower attempt with stopped, charges its breaker nothing and settles its hold', async () => {
    const first = target('small', [slow(5_000)]);
    const second = target('large', [answer('from the hedge')]);
    const call = serve(route([first, second], { hedgeAfterMs: HEDGE_AFTER_MS }));

    await clock.advanceAsync(HEDGE_AFTER_MS);

    expect(call.outcome.state).toBe('fulfilled');
    const { signal } = first.provider.calls[0];
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(ResilienceError);
    expect(signal.reason).toMatchObject({ kind: 'stopped' });
    expect(first.breaker.snapshot().failures).toBe(0);
    expect(tried(call.progress).sort()).toEqual([
      ['fake/large', 'ok'],
      ['fake/small', 'hedge_lost'],
    ]);
    // The loser had sent its prompt: it is charged the input estimate; the winner its usage.
    expect(await budget()).toEqual(money(STOPPED_SMALL_MICROS + 11_000, 0));
    expect(call.account.costMicros).toBe(STOPPED_SMALL_MICROS + 11_000);
    expect(clock.pendingTimers).toBe(0);
  });

  it('counts a hedge that did not answer first as lost, and cancels it', async () => {
    const first = target('small', [slow(500, 'first after all')]);
    const second = target('large', [slow(5_000)]);
    const call = serve(route([first, second], { hedgeAfterMs: HEDGE_AFTER_MS }));

    await clock.advanceAsync(400);
    // Both run: each holds its worst case.
    expect(await budget()).toEqual(money(0, SMALL_WORST_MICROS + LARGE_WORST_MICROS));

    await clock.advanceAsync(100);
    expect(call.outcome.value).toMatchObject({ target: first, hedged: false });
    expect(call.outcome.value?.completion.choices[0].message.content).toBe('first after all');
    expect(call.progress.hedges).toEqual(['lost']);
    expect(second.provider.calls[0].signal.reason).toMatchObject({ kind: 'stopped' });
    expect(second.breaker.snapshot().failures).toBe(0);
    expect(await budget()).toEqual(money(2_400 + STOPPED_LARGE_MICROS, 0));
  });

  it.each([
    [1, [[0], [300], []]],
    [2, [[0], [300], [600]]],
  ])('starts no more than maxHedges (%i) per request, one each hedgeAfterMs', async (maxHedges, times) => {
    const targets = [target('small', [slow(5_000)]), target('large', [slow(5_000)]), target('free', [slow(5_000)])];
    const call = serve(route(targets, { hedgeAfterMs: HEDGE_AFTER_MS, maxHedges }));

    await clock.advanceAsync(5_000);

    expect(targets.map(callTimes)).toEqual(times);
    expect(call.outcome.value?.target).toBe(targets[0]);
    expect(call.progress.hedges).toEqual(Array(maxHedges).fill('lost'));
  });

  it("stops hedging once the route's share is spent: two back to back, then one in ten requests", async () => {
    const first = target('small', [slow(1_000, 'primary')]);
    const second = target('large', [answer('hedge')]);
    const subject = route([first, second], { hedgeAfterMs: HEDGE_AFTER_MS, maxHedges: 1 });

    const hedged: boolean[] = [];
    for (let request = 0; request < 11; request++) {
      const call = serve(subject);
      await clock.advanceAsync(1_000);
      hedged.push(call.outcome.value!.hedged);
    }

    expect(hedged).toEqual([true, true, false, false, false, false, false, false, false, false, true]);
    expect(second.provider.calls).toHaveLength(3);
  });

  it.each(['open', 'half_open'])('sends no hedge to a target whose breaker is %s', async (state) => {
    const first = target('small', [refused, slow(5_000), answer('hedged to itself')]);
    const second = target('large', [{ status: 500 }, answer('never')], { breaker: { volumeThreshold: 1 } });
    const subject = route([first, second], { hedgeAfterMs: HEDGE_AFTER_MS, maxAttempts: 1 });
    // A first request opens the second target's breaker.
    serve(subject);
    await clock.advanceAsync(0);
    expect(second.breaker.state).toBe('open');
    if (state === 'half_open') {
      await clock.advanceAsync(CALM.resetTimeoutMs);
      jest.advanceTimersByTime(CALM.resetTimeoutMs);
    }
    expect(second.breaker.state).toBe(state);
    const start = clock.now();

    const call = serve(subject);
    await clock.advanceAsync(HEDGE_AFTER_MS);

    expect(second.provider.calls).toHaveLength(1);
    // The only target left to hedge to is the running one itself.
    expect(callTimes(first).slice(1)).toEqual([start, start + HEDGE_AFTER_MS]);
    expect(call.outcome.value).toMatchObject({ target: first, hedged: true });
  });

  it.each([429, 529])(
    'sends no hedge to a target that answered %i within its Retry-After, and hedges to it after',
    async (status) => {
      const first = target('small', [refused, slow(5_000)]);
      const second = target('large', [{ status, retryAfterMs: 2_000 }, answer('hedge')]);
      const subject = route([first, second], { hedgeAfterMs: HEDGE_AFTER_MS, maxAttempts: 1 });
      const throttling = serve(subject);
      await clock.advanceAsync(0);
      expect(throttling.outcome.reason).toMatchObject({ kind: 'transient' });

      const within = serve(subject);
      await clock.advanceAsync(5_000);
      expect(within.outcome.value).toMatchObject({ target: first });
      expect(callTimes(second)).toEqual([0]);
      // Hedged to itself instead.
      expect(callTimes(first)).toEqual([0, 0, HEDGE_AFTER_MS]);

      const after = serve(subject);
      await clock.advanceAsync(HEDGE_AFTER_MS);
      expect(after.outcome.value).toMatchObject({ target: second, hedged: true });
      expect(callTimes(second)).toEqual([0, 5_000 + HEDGE_AFTER_MS]);
    },
  );

  it('hedges to the same target when it is the only one', async () => {
    const only = target('small', [slow(5_000), answer('second request')]);
    const call = serve(route([only], { hedgeAfterMs: HEDGE_AFTER_MS }));

    await clock.advanceAsync(HEDGE_AFTER_MS);

    expect(callTimes(only)).toEqual([0, HEDGE_AFTER_MS]);
    expect(call.outcome.value).toMatchObject({ target: only, hedged: true });
    expect(call.outcome.value?.completion.choices[0].message.content).toBe('second request');
    expect(only.provider.calls[0].signal.reason).toMatchObject({ kind: 'stopped' });
    expect(call.progress.hedges).toEqual(['won']);
  });

  it('waits for the hedge when the first attempt fails while it runs, and serves its answer', async () => {
    const first = target('small', [{ status: 503, delayMs: 500 }, answer('never retried')]);
    const second = target('large', [slow(1_000, 'from the hedge')]);
    const call = serve(route([first, second], { hedgeAfterMs: HEDGE_AFTER_MS }));

    await clock.advanceAsync(HEDGE_AFTER_MS + 999);
    expect(call.outcome.state).toBe('pending');
    expect(first.provider.calls).toHaveLength(1);

    await clock.advanceAsync(1);
    expect(call.outcome.value).toMatchObject({ target: second, hedged: true });
    expect(call.progress.hedges).toEqual(['won']);
    expect(tried(call.progress)).toEqual([
      ['fake/small', 'transient'],
      ['fake/large', 'ok'],
    ]);
    // A real failure of the first target: its breaker counts it.
    expect(first.breaker.snapshot().failures).toBe(1);
    expect(await budget()).toEqual(money(11_000, 0));
  });

  it('goes on with retries when the first attempt and its hedge both fail', async () => {
    const first = target('small', [{ status: 503, delayMs: 500 }, answer('retried')]);
    const second = target('large', [{ status: 500, delayMs: 1_000 }]);
    const call = serve(route([first, second], { hedgeAfterMs: HEDGE_AFTER_MS }));

    await clock.advanceAsync(10_000);

    expect(call.outcome.value).toMatchObject({ target: first, hedged: false });
    expect(call.outcome.value?.completion.choices[0].message.content).toBe('retried');
    expect(tried(call.progress)).toEqual([
      ['fake/small', 'transient'],
      ['fake/large', 'transient'],
      ['fake/small', 'ok'],
    ]);
    const [, retriedAt] = callTimes(first);
    expect(retriedAt).toBeGreaterThanOrEqual(HEDGE_AFTER_MS + 1_000);
    // The one hedge the request may start was spent.
    expect(second.provider.calls).toHaveLength(1);
    expect(call.progress).toMatchObject({ attempts: 3, hedges: ['lost'] });
  });

  it('fails over when the first attempt and its hedge both fail for good', async () => {
    const first = target('small', [{ ...refused, delayMs: 500 }]);
    const second = target('large', [{ status: 401, delayMs: 1_000 }, answer('from the next target')]);
    const call = serve(route([first, second], { hedgeAfterMs: HEDGE_AFTER_MS }));

    await clock.advanceAsync(10_000);

    expect(call.outcome.value).toMatchObject({ target: second, hedged: false });
    expect(callTimes(second)).toEqual([HEDGE_AFTER_MS, HEDGE_AFTER_MS + 1_000]);
    expect(call.progress.failovers).toBe(1);
  });

  it('starts no hedge when hedgeAfterMs reaches past the deadline', async () => {
    const first = target('small', [slow(5_000)]);
    const second = target('large', [answer('never')]);
    const call = serve(route([first, second], { hedgeAfterMs: 2_000, deadlineMs: 2_000, maxAttempts: 1 }));

    await clock.advanceAsync(2_000);

    expect(second.provider.calls).toHaveLength(0);
    expect(call.outcome.reason).toMatchObject({ kind: 'timeout' });
  });
});

describe('serveWithFailover: streaming', () => {
  it('hands the winner to deliver once, at its first content, and answers what the stream added up to', async () => {
    const first = target('small', [{ text: TEXT, usage: { promptTokens: 800, completionTokens: 100 } }]);
    const client = reader();
    const call = serve(route([first]), { deliver: client.deliver });

    await clock.advanceAsync(0);

    expect(client.deliveries).toHaveLength(1);
    const [delivery] = client.deliveries;
    expect(delivery.target).toBe(first);
    expect(contents(delivery.head)).toEqual(['', 'x'.repeat(16)]);
    expect(contents(delivery.read)).toEqual(['y'.repeat(16), 'z'.repeat(16), undefined, undefined]);
    expect(call.outcome.value).toMatchObject({ target: first, hedged: false });
    expect(call.outcome.value?.completion.choices[0].message.content).toBe(TEXT);
    expect(tried(call.progress)).toEqual([['fake/small', 'ok']]);
    // The usage the provider reported.
    expect(await budget()).toEqual(money(2_400, 0));
  });

  it.each([
    ['a failing status', { status: 503 } as FakeStepConfig],
    ['a stream cut before its first content', { text: TEXT, cutAfterChunks: 0 } as FakeStepConfig],
  ])('retries a stream that failed before its commit with %s, unseen by deliver', async (_name, step) => {
    const first = target('small', [step, { text: TEXT }]);
    const client = reader();
    const call = serve(route([first]), { deliver: client.deliver });

    await clock.advanceAsync(10_000);

    expect(first.provider.calls).toHaveLength(2);
    expect(client.deliveries).toHaveLength(1);
    expect(client.deliveries[0].head[0].id).toBe('chatcmpl-fake-2');
    expect(tried(call.progress)).toEqual([
      ['fake/small', 'transient'],
      ['fake/small', 'ok'],
    ]);
    expect(call.outcome.value?.completion.choices[0].message.content).toBe(TEXT);
  });

  it('fails over a stream that failed before its commit to the next target', async () => {
    const first = target('small', [{ text: TEXT, cutAfterChunks: 0 }]);
    const second = target('large', [{ text: 'from the next target' }]);
    const client = reader();
    const call = serve(route([first, second], { maxAttempts: 1 }), { deliver: client.deliver });

    await clock.advanceAsync(0);

    expect(client.deliveries.map((delivery) => delivery.target)).toEqual([second]);
    expect(call.outcome.value).toMatchObject({ target: second });
    expect(call.progress.failovers).toBe(1);
    // A cut before any content answered nothing billable.
    expect(await budget()).toEqual(money(call.account.costMicros, 0));
  });

  it('ends with a failure after the commit as it is: no retry, no other target, charged what was counted', async () => {
    const first = target('small', [{ text: TEXT, cutAfterChunks: 2 }, { text: 'never' }]);
    const second = target('large', [{ text: 'never' }]);
    const client = reader();
    const call = serve(route([first, second], { maxAttempts: 3 }), { deliver: client.deliver });

    await clock.advanceAsync(0);

    expect(call.outcome.state).toBe('rejected');
    expect(call.outcome.reason).toBeInstanceOf(ResilienceError);
    expect(call.outcome.reason).toMatchObject({ kind: 'transient', code: 'stream_cut' });
    expect(first.provider.calls).toHaveLength(1);
    expect(second.provider.calls).toHaveLength(0);
    expect(contents(client.deliveries[0].read)).toEqual(['y'.repeat(16)]);
    expect(tried(call.progress)).toEqual([['fake/small', 'transient']]);
    // No usage came: the prompt at its estimate (1 000) and max(2 chunks, ceil(32 / 4)) = 8 tokens out.
    expect(await budget()).toEqual(money(1_000 * 2 + 8 * 8, 0));
    // The breaker hears how the whole stream ended.
    expect(first.breaker.snapshot().failures).toBe(1);
  });

  it("stops the provider's stream when deliver fails without reading it to its end", async () => {
    const first = target('small', [{ text: TEXT, chunkDelayMs: 100 }]);
    const clientGone = new ResilienceError('stopped', 'the client read nothing of the stream for 30000 ms');
    const client = reader(clientGone);
    const call = serve(route([first]), { deliver: client.deliver });

    await clock.advanceAsync(0);

    expect(call.outcome.reason).toBe(clientGone);
    expect(first.provider.calls[0].signal.aborted).toBe(true);
    expect(clock.pendingTimers).toBe(0);
    // One content chunk of 16 characters was sent: 4 tokens out, and the prompt at its estimate.
    expect(await budget()).toEqual(money(1_000 * 2 + 4 * 8, 0));
    expect(first.breaker.snapshot().failures).toBe(0);
  });

  it('stops a stream being delivered when the call is aborted, and charges what was counted', async () => {
    const first = target('small', [{ text: TEXT, chunkDelayMs: 100 }]);
    const client = reader();
    const call = serve(route([first]), { deliver: client.deliver });
    await clock.advanceAsync(150);
    const clientLeft = new ResilienceError('stopped', 'the client closed the connection');

    call.abort.abort(clientLeft);
    await clock.advanceAsync(0);

    expect(call.outcome.reason).toBe(clientLeft);
    expect(first.provider.calls[0].signal.reason).toBe(clientLeft);
    expect(contents(client.deliveries[0].read)).toEqual(['y'.repeat(16)]);
    expect(await budget()).toEqual(money(1_000 * 2 + 8 * 8, 0));
    expect(clock.pendingTimers).toBe(0);
  });

  it('fails an attempt whose first content does not come within firstByteTimeoutMs, and retries it', async () => {
    const first = target('small', [{ text: TEXT, delayMs: 5_000 }, answer('in time')]);
    const client = reader();
    const call = serve(route([first], { firstByteTimeoutMs: 1_000 }), { deliver: client.deliver });

    await clock.advanceAsync(999);
    expect(first.provider.calls[0].signal.aborted).toBe(false);
    expect(client.deliveries).toHaveLength(0);

    await clock.advanceAsync(1);
    expect(first.provider.calls[0].signal.reason).toMatchObject({ kind: 'timeout' });
    // Its requests are only told not to give up between chunks before the route's idle timeout (30 s).
    expect(first.provider.calls[0].timeoutMs).toBe(30_000);

    await clock.advanceAsync(1_000);
    expect(first.provider.calls).toHaveLength(2);
    expect(client.deliveries).toHaveLength(1);
    expect(tried(call.progress)).toEqual([
      ['fake/small', 'timeout'],
      ['fake/small', 'ok'],
    ]);
    // The attempt that timed out had sent its prompt.
    expect(await budget()).toEqual(money(STOPPED_SMALL_MICROS + 2_400, 0));
  });

  it('hedges a stream until its commit: the first to send content is delivered, the other stopped', async () => {
    const first = target('small', [{ text: TEXT, delayMs: 5_000 }]);
    const second = target('large', [{ ...answer(TEXT) }]);
    const client = reader();
    const call = serve(route([first, second], { hedgeAfterMs: HEDGE_AFTER_MS }), { deliver: client.deliver });

    await clock.advanceAsync(HEDGE_AFTER_MS);

    expect(client.deliveries.map((delivery) => delivery.target)).toEqual([second]);
    expect(call.outcome.value).toMatchObject({ target: second, hedged: true });
    expect(call.progress.hedges).toEqual(['won']);
    expect(first.provider.calls[0].signal.reason).toMatchObject({ kind: 'stopped' });
    expect(first.breaker.snapshot().failures).toBe(0);
    expect(await budget()).toEqual(money(STOPPED_SMALL_MICROS + 11_000, 0));
  });

  it('starts no hedge once a stream passed its commit, however slow the rest', async () => {
    const first = target('small', [{ text: TEXT, chunkDelayMs: 1_000 }]);
    const second = target('large', [{ text: 'never' }]);
    const client = reader();
    const call = serve(route([first, second], { hedgeAfterMs: HEDGE_AFTER_MS }), { deliver: client.deliver });

    await clock.advanceAsync(2_000);

    expect(call.outcome.value).toMatchObject({ target: first, hedged: false });
    expect(second.provider.calls).toHaveLength(0);
    expect(call.progress.hedges).toEqual([]);
  });
});
