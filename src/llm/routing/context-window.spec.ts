import { MemoryBudgetStore } from '../../budget';
import { Breaker } from '../../circuit-breaker';
import { LazyAbortController, ResilienceError, seededRandom } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import type { FakeStepConfig } from '../llm.options';
import { MemoryRateLimitStore, RateLimiter } from '../../rate-limit';
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
  admittedAccount,
  dailyBudgetGate,
  INPUT_TOKENS,
  OUTPUT_TOKENS as OUTPUT_CAP,
  WORST_TOKENS as NEEDED,
} from '../../../test/support/llm-accounting';
import type { ChatRequest } from '../chat.types';
import type { FailoverCall, FailoverProgress } from './attempt-race';
import { serveWithFailover } from './failover';
import type { LlmRoute } from './llm-route';

// Context windows through serveWithFailover, in virtual time. Every request here needs
// INPUT_TOKENS (the estimate the account holds) + OUTPUT_CAP = NEEDED (1 500) tokens of window.

const PROMPT = 'Hello there, a secret prompt';
const REQUEST: ChatRequest = { model: 'chat', messages: [{ role: 'user', content: PROMPT }], max_tokens: 500 };
const TOO_LONG: FakeStepConfig = { status: 400, code: 'context_length_exceeded' };
const ok = (text = 'ok'): FakeStepConfig => ({ text });

const routing = routingInVirtualTime();
let clock: FakeClock;
let breakers: Breaker[];
const pool = specPool(8);

beforeEach(() => {
  ({ clock, breakers } = routing);
});

function target(model: string, script: FakeStepConfig[], options: { contextWindow?: number; priority?: number } = {}) {
  return testTarget(clock, breakers, model, script, { ...options, price: undefined });
}

function route(targets: TestTarget[], options: TestRouteOptions = {}): LlmRoute {
  return testRoute(targets, OUTPUT_CAP, { maxAttempts: 2, ...options });
}

function serve(subject: LlmRoute, deliver?: FailoverCall['deliver']) {
  const progress: FailoverProgress = { attempts: 0, failovers: 0, tried: [], hedges: [], choices: [] };
  const limiter = new RateLimiter(new MemoryRateLimitStore(clock), {
    rateLimits: { tenants: {}, failMode: 'closed', enforce: true },
  });
  const account = admittedAccount('acme', dailyBudgetGate(new MemoryBudgetStore(clock), clock), limiter, clock);
  const promise = serveWithFailover(clock, seededRandom(3), {
    route: subject,
    request: REQUEST,
    pool,
    abort: new LazyAbortController(),
    account,
    progress,
    deliver,
  });
  return { outcome: track(promise), progress };
}

function tried(progress: FailoverProgress): Array<[string, string]> {
  return progress.tried.map(({ target: which, outcome }) => [which.label, outcome]);
}

describe('context windows: before sending', () => {
  it('passes over a target whose window cannot hold the input estimate and the output cap, saying why', async () => {
    const small = target('small', [ok()], { contextWindow: NEEDED - 1 });
    const large = target('large', [ok()], { contextWindow: NEEDED });
    const call = serve(route([small, large]));
    await clock.advanceAsync(0);

    expect(call.outcome.value?.target).toBe(large);
    expect(small.provider.calls).toHaveLength(0);
    expect(call.progress.choices.map(({ target: which, reason }) => [which.label, reason])).toEqual([
      ['fake/small', 'context_window'],
      ['fake/large', 'position'],
    ]);
  });

  it('never passes over a target whose window is unknown', async () => {
    const unknown = target('unknown', [ok()]);
    const call = serve(route([unknown, target('large', [ok()], { contextWindow: 1_000_000 })]));
    await clock.advanceAsync(0);
    expect(call.outcome.value?.target).toBe(unknown);
  });

  it('tries the largest windows when the estimate (an upper bound) exceeds every one, and lets the provider decide', async () => {
    const small = target('small', [ok()], { contextWindow: 800 });
    const largest = target('largest', [ok('it fitted after all')], { contextWindow: 1_200 });
    const call = serve(route([small, largest]));
    await clock.advanceAsync(0);

    expect(call.outcome.value?.target).toBe(largest);
    expect(small.provider.calls).toHaveLength(0);
  });
});

describe('context windows: a provider says the context is exceeded', () => {
  it('fails over at once, with no retry, to a target with a strictly larger window only', async () => {
    const mid = target('mid', [TOO_LONG], { contextWindow: 2_000 });
    const same = target('same', [ok()], { contextWindow: 2_000 });
    const smaller = target('smaller', [ok()], { contextWindow: 1_600 });
    const larger = target('larger', [ok('from the larger window')], { contextWindow: 8_000 });
    const call = serve(route([mid, same, smaller, larger]));
    await clock.advanceAsync(0);

    expect(call.outcome.value?.target).toBe(larger);
    expect(mid.provider.calls).toHaveLength(1);
    expect(same.provider.calls).toHaveLength(0);
    expect(smaller.provider.calls).toHaveLength(0);
    expect(tried(call.progress)).toEqual([
      ['fake/mid', 'invalid_request'],
      ['fake/larger', 'ok'],
    ]);
    expect(call.progress.failovers).toBe(1);
  });

  it('goes to a larger window in a later priority group', async () => {
    const main = target('main', [TOO_LONG], { contextWindow: 2_000 });
    const peer = target('peer', [ok()], { contextWindow: 2_000 });
    const wide = target('wide', [ok()], { contextWindow: 200_000, priority: 1 });
    const call = serve(route([main, peer, wide]));
    await clock.advanceAsync(0);
    expect(call.outcome.value?.target).toBe(wide);
    expect(peer.provider.calls).toHaveLength(0);
  });

  it('answers 400 invalid_request naming the sizes, never the prompt, when no larger window is left', async () => {
    const first = target('first', [TOO_LONG], { contextWindow: 2_000 });
    const second = target('second', [TOO_LONG], { contextWindow: 4_000 });
    const call = serve(route([first, second]));
    await clock.advanceAsync(0);

    expect(call.outcome.state).toBe('rejected');
    const error = call.outcome.reason as ResilienceError;
    expect(error).toBeInstanceOf(ResilienceError);
    expect(error.kind).toBe('invalid_request');
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      `the request needs up to ${NEEDED} tokens (input estimate ${INPUT_TOKENS} + output cap ${OUTPUT_CAP}); ` +
        `the largest context window of route 'chat' is 4000 tokens; fake/second (context window 4000) refused it ` +
        'as too long, and no target left has a larger window',
    );
    expect(error.message).not.toContain(PROMPT);
    expect(tried(call.progress)).toEqual([
      ['fake/first', 'invalid_request'],
      ['fake/second', 'invalid_request'],
    ]);
  });

  it('takes a target of unknown window at its word: none is larger', async () => {
    const unknown = target('unknown', [TOO_LONG]);
    const other = target('other', [ok()], { contextWindow: 100_000 });
    const call = serve(route([unknown, other]));
    await clock.advanceAsync(0);

    expect(call.outcome.reason).toMatchObject({ kind: 'invalid_request' });
    expect((call.outcome.reason as Error).message).toContain('fake/unknown (context window unknown)');
    expect(other.provider.calls).toHaveLength(0);
  });

  it('keeps another 400 as it was: the next target, whatever its window', async () => {
    const first = target('first', [{ status: 400 }], { contextWindow: 4_000 });
    const second = target('second', [ok()], { contextWindow: 2_000 });
    const call = serve(route([first, second]));
    await clock.advanceAsync(0);
    expect(call.outcome.value?.target).toBe(second);
  });
});

describe('context windows: streams', () => {
  it('fails a stream refused before its commit over to a larger window, unseen by the client', async () => {
    const small = target('small', [TOO_LONG], { contextWindow: 2_000 });
    const large = target('large', [ok('streamed from the larger window')], { contextWindow: 8_000 });
    const delivered: string[] = [];
    const call = serve(route([small, large]), async ({ stream }, to) => {
      delivered.push(to.label);
      while (await stream.next(30_000));
    });
    await clock.advanceAsync(0);

    expect(delivered).toEqual(['fake/large']);
    expect(call.outcome.value?.completion.choices[0].message.content).toBe('streamed from the larger window');
    expect(small.provider.calls).toHaveLength(1);
  });
});

describe('context windows: hedges', () => {
  it('never hedges to a target the context keeps away', async () => {
    const slow = target('slow', [{ text: 'late', delayMs: 5_000 }], { contextWindow: 4_000 });
    const small = target('small', [ok()], { contextWindow: 1_000 });
    const call = serve(route([slow, small], { hedgeAfterMs: 300 }));
    await clock.advanceAsync(300);
    // The only other target is too small: the hedge goes to the same target, as for a route of one.
    expect(small.provider.calls).toHaveLength(0);
    expect(slow.provider.calls).toHaveLength(2);
    await clock.advanceAsync(5_000);
    expect(call.outcome.value?.target).toBe(slow);
  });
});
