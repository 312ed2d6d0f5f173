import { type BudgetGate, MemoryBudgetStore, microsToUsd } from '../../budget';
import { Breaker, type BreakerSettings } from '../../circuit-breaker';
import { deferred, LazyAbortController, ResilienceError, seededRandom } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import type { FakeStepConfig } from '../llm.options';
import { MemoryRateLimitStore, RateLimiter } from '../../rate-limit';
import { RetryBudget } from '../../retry';
import { track } from '../../../test/support/deferred';
import {
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
  tokensLeftIn,
  WORST_TOKENS,
  admittedAccount,
} from '../../../test/support/llm-accounting';
import type { ChatCompletion, ChatRequest } from '../chat.types';
import type { Price } from '../pricing';
import type { LlmProvider } from '../providers/llm-provider';
import { type FailoverProgress, serveWithFailover } from './failover';
import type { LlmRoute } from './llm-route';
import { RequestAccount } from './request-account';

// Virtual time throughout: the route, the fake providers, the budget and the rate limit run on
// one FakeClock; opossum's own timers (open → half open) run on jest's fake timers.

const SEED = 42;
/** One token a millisecond: the bucket refills exactly, but only where time stands still is it read. */
const TPM = 60_000;

const { SMALL, LARGE } = fakePrices();

const REQUEST: ChatRequest = { model: 'chat', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 500 };

const routing = routingInVirtualTime();
let clock: FakeClock;
let budgetStore: MemoryBudgetStore;
let gate: BudgetGate;
let limiter: RateLimiter;
let rateStore: MemoryRateLimitStore;
let breakers: Breaker[];
const pool = specPool(4);

beforeEach(() => {
  ({ clock, breakers } = routing);
  budgetStore = new MemoryBudgetStore(clock);
  // thrifty's cap is $0.01: 10 000 micro-dollars, above one small worst case and below a large one.
  gate = dailyBudgetGate(budgetStore, clock);
  rateStore = new MemoryRateLimitStore(clock);
  // tight's bucket holds the admission's worst case and not a second one.
  limiter = new RateLimiter(rateStore, {
    rateLimits: { tenants: { acme: { tpm: TPM }, tight: { tpm: 2_000 } }, failMode: 'closed', enforce: true },
  });
});

function target(
  model: string,
  script: FakeStepConfig[],
  options: {
    price?: Price | null;
    timeoutMs?: number;
    breaker?: Partial<BreakerSettings>;
    provider?: LlmProvider;
  } = {},
): TestTarget {
  const price = options.price === null ? undefined : (options.price ?? SMALL);
  return testTarget(clock, breakers, model, script, { ...options, price });
}

function route(targets: TestTarget[], options: TestRouteOptions = {}): LlmRoute {
  return testRoute(targets, OUTPUT_CAP, options);
}

/** A request as the route admits it: the first attempt's worst case already taken from the bucket. */
function account(tenant: string): RequestAccount {
  return admittedAccount(tenant, gate, limiter, clock);
}

/** Starts one request through the route; its outcome is tracked, never left unhandled. */
function serve(subject: LlmRoute, options: { tenant?: string; abort?: LazyAbortController } = {}) {
  const abort = options.abort ?? new LazyAbortController();
  const progress: FailoverProgress = { attempts: 0, failovers: 0, tried: [], hedges: [], choices: [] };
  const requestAccount = account(options.tenant ?? 'acme');
  const promise = serveWithFailover(clock, seededRandom(SEED), {
    route: subject,
    request: REQUEST,
    pool,
    abort,
    account: requestAccount,
    progress,
  });
  return { outcome: track(promise), promise, progress, abort, account: requestAccount };
}

function tried(progress: FailoverProgress): Array<[string, string]> {
  return progress.tried.map(({ target: which, outcome }) => [which.label, outcome]);
}

function callTimes(subject: TestTarget): number[] {
  return subject.provider.calls.map((call) => call.at);
}

/** The waits the route draws with the same seed: full jitter below each ceiling in turn. */
function jitter(ceilings: number[]): number[] {
  const random = seededRandom(SEED);
  return ceilings.map((ceiling) => Math.floor(random() * ceiling));
}

async function budget(tenant: string): Promise<{ spentUsd: number; reservedUsd: number }> {
  const { spentUsd, reservedUsd } = await gate.view(tenant);
  return { spentUsd, reservedUsd };
}

function money(spentMicros: number, reservedMicros: number): { spentUsd: number; reservedUsd: number } {
  return { spentUsd: microsToUsd(spentMicros), reservedUsd: microsToUsd(reservedMicros) };
}

/** Whole tokens left in the tenant's tokens-per-minute bucket. */
function tokensLeft(tenant: string, perMinute: number): number {
  return tokensLeftIn(rateStore, tenant, perMinute);
}

const answer = (text: string): FakeStepConfig => ({ text, usage: { promptTokens: 800, completionTokens: 100 } });
const overloaded: FakeStepConfig = { status: 503 };
const refused: FakeStepConfig = { status: 400 };
const quotaSpent: FakeStepConfig = { status: 429, code: 'insufficient_quota', retryAfterMs: 2_000 };
const slow = (delayMs: number): FakeStepConfig => ({ text: 'late', delayMs });

describe('serveWithFailover', () => {
  describe('order', () => {
    it('serves from the first target that answers and tries none after it', async () => {
      const first = target('small', [answer('from first')]);
      const second = target('large', [answer('from second')]);
      const call = serve(route([first, second]));

      await clock.advanceAsync(0);

      expect(call.outcome.state).toBe('fulfilled');
      expect(call.outcome.value?.target).toBe(first);
      expect(call.outcome.value?.completion.choices[0].message.content).toBe('from first');
      expect(call.progress).toMatchObject({ attempts: 1, failovers: 0 });
      expect(tried(call.progress)).toEqual([['fake/small', 'ok']]);
      expect(second.provider.calls).toHaveLength(0);
    });

    it('goes down the targets in order, each with its own model and the output cap', async () => {
      const first = target('small', [refused]);
      const second = target('large', [quotaSpent]);
      const third = target('free', [answer('from third')], { price: null });
      const call = serve(route([first, second, third]));

      await clock.advanceAsync(0);

      expect(call.outcome.value?.target).toBe(third);
      expect(call.progress).toMatchObject({ attempts: 3, failovers: 2 });
      expect(tried(call.progress)).toEqual([
        ['fake/small', 'invalid_request'],
        ['fake/large', 'unavailable'],
        ['fake/free', 'ok'],
      ]);
      const calls = [first, second, third].map((each) => each.provider.calls);
      expect(calls.map((each) => each.map(({ model, maxOutputTokens }) => ({ model, maxOutputTokens })))).toEqual([
        [{ model: 'small', maxOutputTokens: OUTPUT_CAP }],
        [{ model: 'large', maxOutputTokens: OUTPUT_CAP }],
        [{ model: 'free', maxOutputTokens: OUTPUT_CAP }],
      ]);
    });
  });

  describe('retries', () => {
    it('retries transient failures up to maxAttempts on a target, then tries the next', async () => {
      const first = target('small', [overloaded]);
      const second = target('large', [answer('ok')]);
      const call = serve(route([first, second], { maxAttempts: 3 }));

      await clock.advanceAsync(10_000);

      expect(call.outcome.value?.target).toBe(second);
      expect(first.provider.calls).toHaveLength(3);
      expect(call.progress).toMatchObject({ attempts: 4, failovers: 1 });
      expect(tried(call.progress)).toEqual([
        ['fake/small', 'transient'],
        ['fake/small', 'transient'],
        ['fake/small', 'transient'],
        ['fake/large', 'ok'],
      ]);
    });

    it('spends each target’s retry budget on its retries, and moves on to the next target once it is spent (the LLM route used none)', async () => {
      // One retry in the window, whatever the calls: the second request finds it spent.
      const retryBudget = new RetryBudget({ percent: 0, minRetries: 1, windowMs: 60_000 }, clock);
      const first: TestTarget = { ...target('small', [overloaded]), retryBudget };
      const second = target('large', [answer('ok')]);
      const subject = route([first, second], { maxAttempts: 3 });

      const call = serve(subject);
      await clock.advanceAsync(10_000);
      expect(call.outcome.value?.target).toBe(second);
      expect(tried(call.progress)).toEqual([
        ['fake/small', 'transient'],
        ['fake/small', 'transient'],
        ['fake/large', 'ok'],
      ]);

      const next = serve(subject);
      await clock.advanceAsync(10_000);
      expect(next.outcome.value?.target).toBe(second);
      expect(tried(next.progress)).toEqual([
        ['fake/small', 'transient'],
        ['fake/large', 'ok'],
      ]);
      expect(first.provider.calls).toHaveLength(3);
      expect(retryBudget.window()).toEqual({ calls: 2, retries: 1 });
    });

    it('counts a request’s first attempt on a target as a call, its retries as retries, and a failover as neither', async () => {
      const firstBudget = new RetryBudget({ percent: 100, minRetries: 0, windowMs: 60_000 }, clock);
      const secondBudget = new RetryBudget({ percent: 100, minRetries: 0, windowMs: 60_000 }, clock);
      const first: TestTarget = { ...target('small', [overloaded]), retryBudget: firstBudget };
      const second: TestTarget = { ...target('large', [answer('ok')]), retryBudget: secondBudget };

      const call = serve(route([first, second], { maxAttempts: 3 }));
      await clock.advanceAsync(10_000);

      expect(call.outcome.value?.target).toBe(second);
      // One call allows one retry at 100 %: the second retry on `small` is not made.
      expect(first.provider.calls).toHaveLength(2);
      expect(firstBudget.window()).toEqual({ calls: 1, retries: 1 });
      expect(secondBudget.window()).toEqual({ calls: 1, retries: 0 });
    });

    it('retries an attempt that timed out', async () => {
      const first = target('small', [slow(5_000), answer('second try')], { timeoutMs: 1_000 });
      const call = serve(route([first]));

      await clock.advanceAsync(10_000);

      expect(call.outcome.value?.completion.choices[0].message.content).toBe('second try');
      expect(tried(call.progress)).toEqual([
        ['fake/small', 'timeout'],
        ['fake/small', 'ok'],
      ]);
    });

    it.each([
      ['invalid_request', refused],
      ['unavailable', quotaSpent],
      ['unavailable', { status: 401 } as FakeStepConfig],
    ])('moves on at once, without a retry or a wait, after %s (%j)', async (kind, step) => {
      const first = target('small', [step, answer('never asked twice')]);
      const second = target('large', [answer('ok')]);
      const call = serve(route([first, second], { maxAttempts: 3 }));

      await clock.advanceAsync(0);

      expect(call.outcome.value?.target).toBe(second);
      expect(callTimes(first)).toEqual([0]);
      expect(callTimes(second)).toEqual([0]);
      expect(tried(call.progress)).toEqual([
        ['fake/small', kind],
        ['fake/large', 'ok'],
      ]);
    });

    it.each([
      [[overloaded], [refused], 'invalid_request', 'bad_request'],
      [[refused], [overloaded], 'transient', 'overloaded'],
      [[refused], [quotaSpent], 'unavailable', 'insufficient_quota'],
    ])(
      'answers the last failure when every target fails (%j then %j: %s)',
      async (firstScript, secondScript, kind, code) => {
        const call = serve(route([target('small', firstScript), target('large', secondScript)]));

        await clock.advanceAsync(10_000);

        expect(call.outcome.state).toBe('rejected');
        expect(call.outcome.reason).toMatchObject({ kind, code });
        expect(call.progress.tried.at(-1)).toMatchObject({ outcome: kind });
      },
    );

    it('answers circuit_open when every breaker is open, with no attempt and no reservation', async () => {
      const first = target('small', [answer('never')]);
      const second = target('large', [answer('never')]);
      first.breaker.forceOpen();
      second.breaker.forceOpen();
      const reserve = jest.spyOn(gate, 'reserveMicros');
      const call = serve(route([first, second]));

      await clock.advanceAsync(0);

      expect(call.outcome.reason).toMatchObject({ kind: 'circuit_open' });
      expect(call.progress).toMatchObject({ attempts: 0, failovers: 1 });
      expect(tried(call.progress)).toEqual([
        ['fake/small', 'circuit_open'],
        ['fake/large', 'circuit_open'],
      ]);
      expect(first.provider.calls).toHaveLength(0);
      expect(second.provider.calls).toHaveLength(0);
      expect(reserve).not.toHaveBeenCalled();
    });
  });

  describe('backoff', () => {
    it('waits a full-jitter backoff under min(maxDelay, base · 2^(n − 1)) between attempts', async () => {
      const first = target('small', [overloaded]);
      const call = serve(route([first], { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 250 }));

      await clock.advanceAsync(10_000);

      const ceilings = [100, 200, 250, 250];
      const waits = jitter(ceilings);
      const times = callTimes(first);
      const gaps = times.slice(1).map((at, index) => at - times[index]);
      expect(gaps).toEqual(waits);
      gaps.forEach((gap, index) => {
        expect(gap).toBeGreaterThanOrEqual(0);
        expect(gap).toBeLessThan(ceilings[index]);
      });
      expect(call.outcome.reason).toMatchObject({ kind: 'transient' });
    });

    it.each([700, 5_000])('never waits less than the provider Retry-After of %i ms', async (retryAfterMs) => {
      const first = target('small', [{ status: 503, retryAfterMs }, answer('after the wait')]);
      const call = serve(route([first], { baseDelayMs: 100, maxDelayMs: 1_000 }));

      await clock.advanceAsync(retryAfterMs - 1);
      expect(first.provider.calls).toHaveLength(1);

      await clock.advanceAsync(1);
      expect(callTimes(first)).toEqual([0, retryAfterMs]);
      expect(call.outcome.value?.completion.choices[0].message.content).toBe('after the wait');
    });

    it('moves on to the next target when the wait would last until the deadline', async () => {
      const first = target('small', [{ status: 503, retryAfterMs: 2_000 }]);
      const second = target('large', [answer('ok')]);
      const call = serve(route([first, second], { deadlineMs: 2_000 }));

      await clock.advanceAsync(0);

      expect(call.outcome.value?.target).toBe(second);
      expect(callTimes(first)).toEqual([0]);
      expect(callTimes(second)).toEqual([0]);
      expect(tried(call.progress)).toEqual([
        ['fake/small', 'transient'],
        ['fake/large', 'ok'],
      ]);
    });

    it('waits when the retry still starts before the deadline', async () => {
      const first = target('small', [{ status: 503, retryAfterMs: 1_999 }, answer('just in time')]);
      const second = target('large', [answer('never')]);
      const call = serve(route([first, second], { deadlineMs: 2_000 }));

      await clock.advanceAsync(2_000);

      expect(callTimes(first)).toEqual([0, 1_999]);
      // Its timeout is the millisecond the deadline leaves it.
      expect(first.provider.calls[1].timeoutMs).toBe(1);
      expect(call.outcome.value?.target).toBe(first);
      expect(second.provider.calls).toHaveLength(0);
    });
  });

  describe('timeouts and the deadline', () => {
    it('times out a slow attempt at its target timeout, not a millisecond before', async () => {
      const first = target('small', [slow(5_000)], { timeoutMs: 1_000 });
      const second = target('large', [answer('ok')]);
      const call = serve(route([first, second], { maxAttempts: 1 }));

      await clock.advanceAsync(999);
      expect(call.outcome.state).toBe('pending');
      expect(first.provider.calls[0].signal.aborted).toBe(false);
      expect(second.provider.calls).toHaveLength(0);

      await clock.advanceAsync(1);
      expect(first.provider.calls[0]).toMatchObject({ timeoutMs: 1_000 });
      expect(first.provider.calls[0].signal.aborted).toBe(true);
      expect(callTimes(second)).toEqual([1_000]);
      expect(call.outcome.value?.target).toBe(second);
      expect(tried(call.progress)).toEqual([
        ['fake/small', 'timeout'],
        ['fake/large', 'ok'],
      ]);
    });

    it('caps each attempt timeout at what is left of the deadline, and ends with timeout there', async () => {
      const first = target('small', [overloaded, slow(60_000)], { timeoutMs: 10_000 });
      const second = target('large', [answer('never')]);
      const call = serve(route([first, second], { deadlineMs: 3_000, baseDelayMs: 100 }));
      const [wait] = jitter([100]);

      await clock.advanceAsync(2_999);
      expect(callTimes(first)).toEqual([0, wait]);
      expect(first.provider.calls[1].timeoutMs).toBe(3_000 - wait);
      expect(call.outcome.state).toBe('pending');

      await clock.advanceAsync(1);
      expect(call.outcome.state).toBe('rejected');
      expect(call.outcome.reason).toMatchObject({ kind: 'timeout' });
      expect(call.progress.attempts).toBe(2);
      expect(tried(call.progress)).toEqual([
        ['fake/small', 'transient'],
        ['fake/small', 'timeout'],
      ]);
      expect(second.provider.calls).toHaveLength(0);
      expect(clock.pendingTimers).toBe(0);
    });
  });

  describe('stopping', () => {
    const clientLeft = new ResilienceError('stopped', 'the client closed the connection');

    it('ends at once with stopped when the call is aborted during an attempt, and starts no other', async () => {
      const first = target('small', [slow(5_000)]);
      const second = target('large', [answer('never')]);
      const call = serve(route([first, second]));
      await clock.advanceAsync(200);

      call.abort.abort(clientLeft);
      await clock.advanceAsync(0);

      expect(call.outcome.reason).toBe(clientLeft);
      expect(first.provider.calls[0].signal.aborted).toBe(true);
      expect(tried(call.progress)).toEqual([['fake/small', 'stopped']]);
      expect(call.progress.attempts).toBe(1);
      await clock.advanceAsync(60_000);
      expect(second.provider.calls).toHaveLength(0);
      expect(first.provider.calls).toHaveLength(1);
    });

    it('ends at once with stopped when the call is aborted during a backoff wait, and starts no other', async () => {
      const first = target('small', [{ status: 503, retryAfterMs: 1_000 }]);
      const second = target('large', [answer('never')]);
      const call = serve(route([first, second]));
      await clock.advanceAsync(500);

      call.abort.abort(clientLeft);
      await clock.advanceAsync(0);

      expect(call.outcome.reason).toBe(clientLeft);
      expect(clock.pendingTimers).toBe(0);
      await clock.advanceAsync(60_000);
      expect(first.provider.calls).toHaveLength(1);
      expect(second.provider.calls).toHaveLength(0);
      expect(call.progress.attempts).toBe(1);
    });

    it.each([
      ['during an attempt', slow(5_000)],
      ['during a backoff wait', { status: 503, retryAfterMs: 1_000 } as FakeStepConfig],
    ])('reads any other abort reason as stopped, %s', async (_when, step) => {
      const call = serve(route([target('small', [step])]));
      await clock.advanceAsync(500);

      call.abort.abort(new Error('socket closed'));
      await clock.advanceAsync(0);

      expect(call.outcome.state).toBe('rejected');
      expect(call.outcome.reason).toBeInstanceOf(ResilienceError);
      expect(call.outcome.reason).toMatchObject({ kind: 'stopped' });
    });

    it('makes no attempt and charges nothing when the call is aborted while its reservation is made', async () => {
      const first = target('small', [answer('never')]);
      const abort = new LazyAbortController();
      const reserve = budgetStore.reserve.bind(budgetStore);
      // The client leaves while the budget store answers.
      jest.spyOn(budgetStore, 'reserve').mockImplementation((...args) => {
        abort.abort(clientLeft);
        return reserve(...args);
      });
      const call = serve(route([first]), { abort });

      await clock.advanceAsync(0);

      expect(call.outcome.reason).toBe(clientLeft);
      expect(first.provider.calls).toHaveLength(0);
      expect(call.progress.attempts).toBe(0);
      expect(call.account.costMicros).toBe(0);
      expect(await budget('acme')).toEqual(money(0, 0));
    });
  });

  describe('breakers', () => {
    it('counts transient failures, opens after volumeThreshold, then passes the target over', async () => {
      const settings = { volumeThreshold: 3 };
      const first = target('small', [overloaded], { breaker: settings });
      const second = target('large', [answer('ok')], { price: LARGE });
      const subject = route([first, second]);
      const reserve = jest.spyOn(gate, 'reserveMicros');

      const before = serve(subject);
      await clock.advanceAsync(1_000);
      expect(first.breaker.state).toBe('closed');

      const opening = serve(subject);
      await clock.advanceAsync(1_000);
      expect(first.breaker.state).toBe('open');
      // The failure that opened it ends this target at once: no backoff wait spent on a refusal.
      expect(tried(opening.progress)).toEqual([
        ['fake/small', 'transient'],
        ['fake/large', 'ok'],
      ]);
      expect(opening.progress.attempts).toBe(2);

      reserve.mockClear();
      const after = serve(subject);
      await clock.advanceAsync(0);
      expect(tried(after.progress)).toEqual([
        ['fake/small', 'circuit_open'],
        ['fake/large', 'ok'],
      ]);
      expect(after.progress).toMatchObject({ attempts: 1, failovers: 1 });
      expect(first.provider.calls).toHaveLength(3);
      // Only the served target's worst case was held.
      expect(reserve.mock.calls.map(([, amount]) => amount)).toEqual([LARGE_WORST_MICROS]);
      expect(before.outcome.value?.target).toBe(second);
    });

    it('counts timeouts against the breaker', async () => {
      const first = target('small', [slow(5_000)], { timeoutMs: 1_000, breaker: { volumeThreshold: 2 } });
      const second = target('large', [answer('ok')]);
      const call = serve(route([first, second]));

      await clock.advanceAsync(10_000);

      expect(first.breaker.state).toBe('open');
      expect(call.outcome.value?.target).toBe(second);
    });

    it('counts nowhere a timeout the deadline chose: an attempt left less than its target’s own time', async () => {
      // The first target spends most of the deadline; the second is left 500 ms of its 10 s.
      const first = target('small', [slow(60_000)], { timeoutMs: 2_500 });
      const second = target('large', [slow(60_000)], { timeoutMs: 10_000, breaker: { volumeThreshold: 1 } });
      const call = serve(route([first, second], { deadlineMs: 3_000, maxAttempts: 1 }));

      await clock.advanceAsync(3_000);

      expect(call.outcome.reason).toMatchObject({ kind: 'timeout' });
      expect(second.provider.calls[0].timeoutMs).toBe(500);
      expect(second.breaker.snapshot()).toMatchObject({ state: 'closed', failures: 0 });
    });

    it('never opens the breaker on invalid_request', async () => {
      const first = target('small', [refused], { breaker: { volumeThreshold: 1 } });
      const second = target('large', [answer('ok')]);
      const subject = route([first, second]);

      for (let request = 0; request < 5; request++) {
        serve(subject);
        await clock.advanceAsync(0);
      }

      expect(first.breaker.state).toBe('closed');
      expect(first.provider.calls).toHaveLength(5);
    });

    it('lets only the probe of a half-open breaker reach its target, passing concurrent requests over', async () => {
      const resetTimeoutMs = 5_000;
      const first = target('small', [overloaded, { ...answer('probe'), delayMs: 100 }], {
        breaker: { volumeThreshold: 1, resetTimeoutMs },
      });
      const second = target('large', [answer('ok')]);
      const subject = route([first, second], { maxAttempts: 1 });
      serve(subject);
      await clock.advanceAsync(0);
      expect(first.breaker.state).toBe('open');
      await clock.advanceAsync(resetTimeoutMs);
      jest.advanceTimersByTime(resetTimeoutMs);
      expect(first.breaker.state).toBe('half_open');

      const probing = serve(subject);
      const passedOver = serve(subject);
      await clock.advanceAsync(100);

      expect(probing.outcome.value?.target).toBe(first);
      expect(passedOver.outcome.value?.target).toBe(second);
      expect(first.provider.calls).toHaveLength(2);
      expect(tried(passedOver.progress)).toEqual([
        ['fake/small', 'circuit_open'],
        ['fake/large', 'ok'],
      ]);
      expect(passedOver.progress.attempts).toBe(1);
      expect(first.breaker.state).toBe('closed');
    });
  });

  describe('accounting', () => {
    it('holds each attempt worst case at its target price while it runs, then charges the real usage', async () => {
      const first = target('small', [{ status: 503, delayMs: 100 }], { price: SMALL });
      const second = target('large', [{ ...answer('ok'), delayMs: 100 }], { price: LARGE });
      const call = serve(route([first, second], { maxAttempts: 1 }));

      await clock.advanceAsync(50);
      expect(await budget('acme')).toEqual(money(0, SMALL_WORST_MICROS));

      await clock.advanceAsync(100);
      // The failed attempt was refused by its provider: it cost nothing.
      expect(await budget('acme')).toEqual(money(0, LARGE_WORST_MICROS));

      await clock.advanceAsync(100);
      // 800 × $10 + 100 × $30 per million tokens.
      expect(call.outcome.state).toBe('fulfilled');
      expect(await budget('acme')).toEqual(money(11_000, 0));
      expect(call.account.costMicros).toBe(11_000);
    });

    it('charges an attempt that timed out its input estimate', async () => {
      const first = target('small', [slow(5_000)], { timeoutMs: 1_000 });
      const second = target('large', [answer('ok')], { price: null });
      const call = serve(route([first, second], { maxAttempts: 1 }));

      await clock.advanceAsync(1_000);

      expect(call.outcome.value?.target).toBe(second);
      // 1 000 × $2 per million tokens; the unpriced target costs nothing.
      expect(await budget('acme')).toEqual(money(2_000, 0));
      expect(call.account.costMicros).toBe(2_000);
    });

    it('takes the worst-case tokens of each later attempt, and settling gives back exactly taken − used', async () => {
      const first = target('small', [overloaded]);
      const second = target('large', [answer('ok')]);
      const take = jest.spyOn(limiter, 'takeTokens');
      const settle = jest.spyOn(limiter, 'settleTokens');
      // No backoff: virtual time stands still, so the bucket does not refill under the test.
      const call = serve(route([first, second], { baseDelayMs: 0, maxDelayMs: 0 }));

      await clock.advanceAsync(0);
      expect(call.outcome.value?.target).toBe(second);
      expect(take.mock.calls).toEqual([
        ['acme', WORST_TOKENS],
        ['acme', WORST_TOKENS],
      ]);
      expect(tokensLeft('acme', TPM)).toBe(TPM - 3 * WORST_TOKENS);

      call.account.settleTokens();

      expect(settle).toHaveBeenCalledWith('acme', 3 * WORST_TOKENS, 900);
      expect(tokensLeft('acme', TPM)).toBe(TPM - 900);
    });

    it('does not call a target whose worst case the budget refuses, and ends with budget_exceeded', async () => {
      const first = target('small', [refused], { price: SMALL });
      const second = target('large', [answer('never')], { price: LARGE });
      const call = serve(route([first, second]), { tenant: 'thrifty' });

      await clock.advanceAsync(0);

      expect(call.outcome.reason).toMatchObject({ kind: 'budget_exceeded' });
      expect(second.provider.calls).toHaveLength(0);
      expect(call.progress.attempts).toBe(1);
      expect(tried(call.progress)).toEqual([['fake/small', 'invalid_request']]);
      expect(await budget('thrifty')).toEqual(money(0, 0));
    });

    it('does not call a target whose tokens the rate limit refuses, and ends with rate_limited', async () => {
      const first = target('small', [refused]);
      const second = target('large', [answer('never')]);
      const call = serve(route([first, second]), { tenant: 'tight' });

      await clock.advanceAsync(0);

      expect(call.outcome.reason).toMatchObject({ kind: 'rate_limited' });
      expect(second.provider.calls).toHaveLength(0);
      expect(call.progress.attempts).toBe(1);
      call.account.settleTokens();
      expect(tokensLeft('tight', 2_000)).toBe(2_000);
    });

    it('reserves nothing for an unpriced target', async () => {
      const reserve = jest.spyOn(gate, 'reserveMicros');
      const call = serve(route([target('free', [answer('ok')], { price: null })]));

      await clock.advanceAsync(0);

      expect(call.outcome.state).toBe('fulfilled');
      expect(reserve).not.toHaveBeenCalled();
      expect(call.account.costMicros).toBe(0);
      expect(await budget('acme')).toEqual(money(0, 0));
    });
  });

  describe('the lane slot', () => {
    it('resolves only after every provider request it started has settled', async () => {
      // A provider that goes on after its attempt timed out, until the test lets it finish.
      const finished = deferred<ChatCompletion>();
      const stubborn: LlmProvider = { name: 'fake', complete: () => finished.promise, stream: unused };
      const first = target('small', [], { timeoutMs: 1_000, provider: stubborn });
      const second = target('large', [answer('ok')]);
      const call = serve(route([first, second], { maxAttempts: 1 }));

      await clock.advanceAsync(1_000);
      expect(first.provider.calls[0].signal.aborted).toBe(true);
      expect(callTimes(second)).toEqual([1_000]);
      expect(tried(call.progress)).toEqual([
        ['fake/small', 'timeout'],
        ['fake/large', 'ok'],
      ]);
      await clock.advanceAsync(60_000);
      expect(call.outcome.state).toBe('pending');

      finished.reject(new ResilienceError('stopped', 'aborted at last'));
      await clock.advanceAsync(0);
      expect(call.outcome.value?.target).toBe(second);
    });

    it('fails only after every provider request it started has settled', async () => {
      const finished = deferred<ChatCompletion>();
      const stubborn: LlmProvider = { name: 'fake', complete: () => finished.promise, stream: unused };
      const call = serve(route([target('small', [], { timeoutMs: 1_000, provider: stubborn })], { maxAttempts: 1 }));

      await clock.advanceAsync(60_000);
      expect(call.outcome.state).toBe('pending');

      finished.resolve({} as ChatCompletion);
      await clock.advanceAsync(0);
      expect(call.outcome.reason).toMatchObject({ kind: 'timeout' });
    });
  });
});

function unused(): never {
  throw new Error('this test streams nothing');
}
