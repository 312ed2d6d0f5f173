import { MemoryBudgetStore } from '../budget';
import { createAdaptiveLimit, Lane } from '../bulkhead';
import { LazyAbortController, ResilienceError, seededRandom } from '../common';
import type { FakeStepConfig } from './llm.options';
import { admitCall } from '../pipeline';
import { MemoryRateLimitStore, RateLimiter } from '../rate-limit';
import { track } from '../../test/support/deferred';
import { admittedAccount, dailyBudgetGate, OUTPUT_TOKENS } from '../../test/support/llm-accounting';
import { routingInVirtualTime, specPool, type TestTarget, testRoute, testTarget } from '../../test/support/llm-routes';
import type { ChatCall } from './chat-call';
import type { ChatRequest } from './chat.types';
import { LlmRunWork } from './llm-run-work';
import type { FailoverProgress } from './routing/failover';

// A run in a real lane, on a real route of fake targets, in virtual time: what the lane does
// with the run object, which the route's own specs (serveWithFailover alone) do not see.

const REQUEST: ChatRequest = { model: 'chat', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 500 };
const routing = routingInVirtualTime();
const pool = specPool(4);

const answer = (text: string): FakeStepConfig => ({ text, usage: { promptTokens: 800, completionTokens: 100 } });
const slow = (delayMs: number): FakeStepConfig => ({ text: 'late', delayMs });

function target(model: string, script: FakeStepConfig[], timeoutMs = 30_000): TestTarget {
  return testTarget(routing.clock, routing.breakers, model, script, { timeoutMs });
}

/** Admits one run of `targets` into `lane` as the chat route does: no breaker, the run both work and call. */
function admitRun(lane: Lane, targets: TestTarget[], abort = new LazyAbortController()) {
  const { clock } = routing;
  const limiter = new RateLimiter(new MemoryRateLimitStore(clock), {
    rateLimits: { tenants: {}, failMode: 'closed', enforce: true },
  });
  const account = admittedAccount('acme', dailyBudgetGate(new MemoryBudgetStore(clock), clock), limiter, clock);
  const progress: FailoverProgress = { attempts: 0, failovers: 0, tried: [], hedges: [], choices: [] };
  const call = { tenant: 'acme' } as ChatCall;
  const route = testRoute(targets, OUTPUT_TOKENS, { maxAttempts: 1 });
  const work = new LlmRunWork(
    clock,
    seededRandom(1),
    call,
    route,
    REQUEST,
    pool,
    abort,
    account,
    progress,
    undefined,
    'standard',
  );
  const refusal = admitCall(undefined, lane, undefined, undefined, work, work);
  return { refusal, outcome: track(work.answer), abort, progress };
}

describe('LlmRunWork in its lane', () => {
  it('holds its slot until the loop settles, then answers, and the next run starts', async () => {
    const { clock } = routing;
    const lane = new Lane({ name: 'llm', concurrency: 1, queueCapacity: 1, clock });
    const first = target('first', [slow(5_000)]);
    const second = target('second', [answer('second')]);
    const running = admitRun(lane, [first]);
    const waiting = admitRun(lane, [second]);
    expect(lane.snapshot()).toMatchObject({ active: 1, waiting: 1 });

    await clock.advanceAsync(4_999);
    expect(running.outcome.state).toBe('pending');
    expect(second.provider.calls).toHaveLength(0);

    await clock.advanceAsync(1);
    expect(running.outcome.value?.completion.choices[0].message.content).toBe('late');
    expect(second.provider.calls.map((call) => call.at)).toEqual([5_000]);
    await clock.advanceAsync(0);
    expect(waiting.outcome.value?.completion.choices[0].message.content).toBe('second');
    expect(lane.snapshot()).toMatchObject({ active: 0, waiting: 0 });
  });

  it('frees the place of a waiting run whose client leaves: answered with its reason, no target asked', async () => {
    const { clock } = routing;
    const lane = new Lane({ name: 'llm', concurrency: 1, queueCapacity: 1, clock });
    admitRun(lane, [target('busy', [slow(5_000)])]);
    const idle = target('idle', [answer('never')]);
    const waiting = admitRun(lane, [idle]);
    const gone = new ResilienceError('stopped', 'the client left');

    waiting.abort.abort(gone);
    await clock.advanceAsync(0);

    expect(waiting.outcome).toMatchObject({ state: 'rejected', reason: gone });
    expect(lane.snapshot()).toMatchObject({ active: 1, waiting: 0 });
    expect(lane.stats().cancelledQueued).toBe(1);
    // Its place is free again: another run waits where it waited.
    expect(admitRun(lane, [target('next', [answer('next')])]).refusal).toBeUndefined();
    await clock.advanceAsync(10_000);
    expect(idle.provider.calls).toHaveLength(0);
  });

  it('is refused with its lane’s error, never starting, when the lane is full', () => {
    const lane = new Lane({ name: 'llm', concurrency: 1, queueCapacity: 0, clock: routing.clock });
    admitRun(lane, [target('busy', [slow(5_000)])]);
    const unused = target('unused', [answer('never')]);

    const refused = admitRun(lane, [unused]);

    expect(refused.refusal).toMatchObject({ kind: 'queue_full' });
    expect(refused.outcome.state).toBe('pending'); // the caller answers with the refusal, not the run
    expect(unused.provider.calls).toHaveLength(0);
  });

  it('tells an adaptive lane a run that timed out as a drop, as any task that timed out', async () => {
    const { clock } = routing;
    const adaptive = createAdaptiveLimit('llm', { algorithm: 'aimd', min: 1, max: 8 }, 4, seededRandom(7));
    const lane = new Lane({ name: 'llm', concurrency: 4, queueCapacity: 0, clock, adaptive });

    const run = admitRun(lane, [target('slow', [slow(5_000)], 1_000)]);
    await clock.advanceAsync(5_000);

    expect(run.outcome.state).toBe('rejected');
    expect((run.outcome.reason as ResilienceError).kind).toBe('timeout');
    expect(lane.currentLimit).toBe(3);
  });
});
