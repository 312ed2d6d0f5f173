import { Logger } from '@nestjs/common';
import { type Deferred, deferred, track } from '../../test/support/deferred';
import { BudgetGate, type BudgetReservation, type BudgetUsage, MemoryBudgetStore } from '../budget';
import { Breaker, type BreakerSettings } from '../circuit-breaker';
import { type ErrorKind, isPromiseLike, LazyAbortController, ResilienceError, seededRandom } from '../common';
import { FakeClock, settle } from '../common/fake-clock';
import { parseConfig } from '../config';
import { HttpPools } from '../containment';
import { CallOutcomes, EventLedger } from '../events';
import { type AttemptCall, AttemptRunner } from './attempt-runner';
import { type AttemptBudget, CallExecutor, type ExecutionProgress } from './call-executor';
import { RetryBudget, type RetryBudgetSettings } from '../retry/retry-budget';
import { RetryPolicy, type RetrySettings } from '../retry/retry-policy';
import { ToolCallBudget } from './tool-call-budget';
import type { ToolContext, ToolDefinition } from './tool';
import { parseRetryAfter, upstreamStatusError } from '../common/errors/upstream-errors';

/** A breaker that will not open in these tests unless a test asks it to. */
const QUIET_BREAKER: BreakerSettings = {
  errorThresholdPercentage: 50,
  volumeThreshold: 1_000,
  resetTimeoutMs: 30_000,
  rollingCountTimeoutMs: 10_000,
};

interface ToolOptions {
  id?: string;
  idempotent?: boolean;
  timeoutMs?: number;
  retry?: Partial<RetrySettings>;
  budget?: Partial<RetryBudgetSettings>;
  breaker?: Partial<BreakerSettings>;
}

/** What one handler invocation saw. */
interface Invocation {
  attempt: number;
  at: number;
  context: ToolContext;
}

type Step = (context: ToolContext) => unknown;

function transient(message: string, retryAfterMs?: number): ResilienceError {
  return new ResilienceError('transient', message, { retryAfterMs });
}

/** A step that fails at once with `error`. */
const fail =
  (error: unknown): Step =>
  () =>
    Promise.reject(error);
/** A step that answers at once with `value`. */
const succeed =
  (value: unknown): Step =>
  () =>
    Promise.resolve(value);
/** A step that runs until its signal aborts, then stops with the signal's reason: a well-behaved handler. */
const untilAborted: Step = (context) =>
  new Promise((_resolve, reject) => {
    context.signal.addEventListener('abort', () => reject(context.signal.reason as Error), { once: true });
  });
/** A step that ignores its signal and returns only when `gate` resolves. */
const ignoringSignal =
  (gate: Deferred<unknown>): Step =>
  () =>
    gate.promise;

describe('CallExecutor', () => {
  let pools: HttpPools;
  let clock: FakeClock;
  let outcomes: CallOutcomes;
  let executor: CallExecutor;
  let breakers: Breaker[];
  let invocations: Invocation[];
  let retried: string[];

  beforeEach(() => {
    clock = new FakeClock();
    outcomes = new CallOutcomes(new EventLedger(100, clock), clock);
    pools = testPools(clock);
    executor = new CallExecutor(new AttemptRunner(clock, pools), outcomes, clock, seededRandom(20260101));
    breakers = [];
    invocations = [];
    retried = [];
    outcomes.onRetry((toolId) => retried.push(`${toolId}@${clock.now()}`));
    // An unexpected handler error is logged as a warning; keep the test output quiet.
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => {});
  });

  afterEach(async () => {
    await pools.onApplicationShutdown();
    for (const breaker of breakers) breaker.shutdown();
    jest.restoreAllMocks();
  });

  /** A tool whose handler plays `steps` in order, one per attempt, repeating the last one. */
  function tool(steps: Step[], options: ToolOptions = {}): ToolDefinition {
    const id = options.id ?? 'read_note';
    const timeoutMs = options.timeoutMs ?? 1_000;
    const breaker = new Breaker(id, { ...QUIET_BREAKER, ...options.breaker }, clock);
    breakers.push(breaker);
    return {
      id,
      kind: 'builtin',
      lane: 'default',
      description: undefined,
      timeoutMs,
      idempotent: options.idempotent ?? false,
      containment: 'allow',
      costUsd: 0,
      tokens: 0,
      validate: () => {},
      retry: new RetryPolicy({
        maxAttempts: 3,
        baseDelayMs: 100,
        maxDelayMs: 2_000,
        deadlineMs: 60_000,
        ...options.retry,
      }),
      retryBudget: new RetryBudget({ percent: 20, minRetries: 100, windowMs: 10_000, ...options.budget }, clock),
      breaker,
      handler: (_args, context) => {
        invocations.push({ attempt: context.attempt, at: clock.now(), context });
        const step = steps[Math.min(context.attempt, steps.length) - 1]!;
        return step(context);
      },
    };
  }

  function start(toolDefinition: ToolDefinition, abort = new LazyAbortController(), budget?: AttemptBudget) {
    const progress: ExecutionProgress = { attempts: 0 };
    const call: AttemptCall = { callId: 'call-1', tenant: 'acme', pool: 'normal', abort };
    const answer = deferred<unknown>();
    const execution = {
      outcome: answer.promise,
      settled: executor.run(toolDefinition, {}, call, toolDefinition.timeoutMs, progress, answer, budget),
    };
    let answeredAt: number | undefined;
    let attemptsWhenAnswered: number | undefined;
    const noteAnswer = () => {
      answeredAt = clock.now();
      attemptsWhenAnswered = progress.attempts;
    };
    execution.outcome.then(noteAnswer, noteAnswer);
    return {
      progress,
      abort,
      outcome: track(execution.outcome),
      settled: track(execution.settled),
      answeredAt: () => answeredAt,
      attemptsWhenAnswered: () => attemptsWhenAnswered,
    };
  }

  function errorOf(outcome: { state: string; reason?: unknown }): ResilienceError {
    expect(outcome.state).toBe('rejected');
    expect(outcome.reason).toBeInstanceOf(ResilienceError);
    return outcome.reason as ResilienceError;
  }

  describe('transient failures', () => {
    it('retries a transient failure until an attempt succeeds, and reports the attempts made', async () => {
      const run = start(tool([fail(transient('reset')), fail(transient('reset')), succeed({ text: 'note' })]));

      await clock.advanceAsync(10_000);

      expect(run.outcome).toMatchObject({ state: 'fulfilled', value: { text: 'note' } });
      expect(run.attemptsWhenAnswered()).toBe(3);
      expect(run.progress.attempts).toBe(3);
      expect(invocations.map((invocation) => invocation.attempt)).toEqual([1, 2, 3]);
      expect(run.settled.state).toBe('fulfilled');
    });

    it('stops after maxAttempts and answers the last failure with the attempts made', async () => {
      const run = start(
        tool(
          [
            fail(transient('attempt 1 failed')),
            fail(transient('attempt 2 failed')),
            fail(transient('attempt 3 failed')),
          ],
          {
            retry: { maxAttempts: 3 },
          },
        ),
      );

      await clock.advanceAsync(10_000);

      const error = errorOf(run.outcome);
      expect(error.kind).toBe('transient');
      expect(error.message).toBe('attempt 3 failed');
      expect(error.attempts).toBe(3);
      expect(invocations).toHaveLength(3);
    });

    it('makes exactly one attempt when maxAttempts is 1', async () => {
      const run = start(tool([fail(transient('reset'))], { retry: { maxAttempts: 1 } }));

      await clock.advanceAsync(10_000);

      expect(errorOf(run.outcome).attempts).toBe(1);
      expect(invocations).toHaveLength(1);
      expect(retried).toEqual([]);
    });

    it('waits a backoff below the ceiling of each retry before starting it', async () => {
      start(tool([fail(transient('reset'))], { retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 2_000 } }));

      await clock.advanceAsync(10_000);

      const starts = invocations.map((invocation) => invocation.at);
      const waits = starts.slice(1).map((at, i) => at - starts[i]!);
      expect(waits).toHaveLength(3);
      waits.forEach((waitMs, i) => {
        expect(waitMs).toBeGreaterThanOrEqual(0);
        expect(waitMs).toBeLessThan(100 * 2 ** i);
      });
    });
  });

  describe('failures that are never retried', () => {
    it.each<[ErrorKind]>([['schema'], ['not_found'], ['internal'], ['egress_denied']])(
      'answers %s after one attempt, even for an idempotent tool',
      async (kind) => {
        const run = start(tool([fail(new ResilienceError(kind, `failed with ${kind}`))], { idempotent: true }));

        await clock.advanceAsync(10_000);

        const error = errorOf(run.outcome);
        expect(error.kind).toBe(kind);
        expect(error.attempts).toBe(1);
        expect(invocations).toHaveLength(1);
        expect(retried).toEqual([]);
      },
    );

    it('does not retry a handler’s unexpected error, answered as internal', async () => {
      const run = start(tool([fail(new Error('boom'))], { idempotent: true }));

      await clock.advanceAsync(10_000);

      const error = errorOf(run.outcome);
      expect(error.kind).toBe('internal');
      expect(error.attempts).toBe(1);
      expect(invocations).toHaveLength(1);
    });
  });

  describe('timeouts', () => {
    it('retries a timed-out attempt of an idempotent tool', async () => {
      const run = start(tool([untilAborted, untilAborted, succeed('ok')], { idempotent: true, timeoutMs: 100 }));

      await clock.advanceAsync(10_000);

      expect(run.outcome).toMatchObject({ state: 'fulfilled', value: 'ok' });
      expect(run.progress.attempts).toBe(3);
      expect(invocations.map((invocation) => invocation.context.signal.aborted)).toEqual([true, true, false]);
    });

    it('does not retry a timed-out attempt of a tool that is not idempotent', async () => {
      const run = start(tool([untilAborted, succeed('ok')], { idempotent: false, timeoutMs: 100 }));

      await clock.advanceAsync(10_000);

      const error = errorOf(run.outcome);
      expect(error.kind).toBe('timeout');
      expect(error.attempts).toBe(1);
      expect(run.answeredAt()).toBe(100);
      expect(invocations).toHaveLength(1);
    });

    it('starts a retry after a timeout only once the timed-out handler has settled', async () => {
      const gate = deferred<unknown>();
      const run = start(
        tool([ignoringSignal(gate), succeed('ok')], {
          idempotent: true,
          timeoutMs: 100,
          retry: { baseDelayMs: 10, maxDelayMs: 10 },
        }),
      );

      await clock.advanceAsync(100);
      expect(invocations[0]!.context.signal.aborted).toBe(true);
      await clock.advanceAsync(2_000);
      expect(invocations).toHaveLength(1);
      expect(run.outcome.state).toBe('pending');

      gate.resolve('too late');
      await settle();
      await clock.advanceAsync(0);

      expect(invocations.map((invocation) => invocation.attempt)).toEqual([1, 2]);
      expect(invocations[1]!.at).toBe(2_100);
      expect(run.outcome).toMatchObject({ state: 'fulfilled', value: 'ok' });
      expect(run.progress.attempts).toBe(2);
    });

    it('answers the timeout when the timed-out handler is still running at the last moment a retry could start', async () => {
      const gate = deferred<unknown>();
      const run = start(
        tool([ignoringSignal(gate), succeed('ok')], {
          idempotent: true,
          timeoutMs: 100,
          retry: { baseDelayMs: 10, maxDelayMs: 10, deadlineMs: 1_000 },
        }),
      );

      await clock.advanceAsync(899);
      expect(run.outcome.state).toBe('pending');
      await clock.advanceAsync(1);

      const error = errorOf(run.outcome);
      expect(error.kind).toBe('timeout');
      expect(error.attempts).toBe(1);
      expect(run.settled.state).toBe('pending');

      gate.resolve('too late');
      await settle();
      await clock.advanceAsync(10_000);
      expect(run.settled.state).toBe('fulfilled');
      expect(invocations).toHaveLength(1);
    });
  });

  describe('an upstream Retry-After', () => {
    it('waits at least the delay-seconds of a Retry-After before the retry, longer than maxDelayMs', async () => {
      const retryAfterMs = parseRetryAfter('3', clock.wallNow());
      expect(retryAfterMs).toBe(3_000);
      const run = start(
        tool([fail(upstreamStatusError('read_note', 503, retryAfterMs)), succeed('ok')], {
          retry: { baseDelayMs: 100, maxDelayMs: 2_000 },
        }),
      );

      await clock.advanceAsync(2_999);
      expect(invocations).toHaveLength(1);
      expect(retried).toEqual([]);

      await clock.advanceAsync(1);
      expect(invocations.map((invocation) => invocation.at)).toEqual([0, 3_000]);
      expect(retried).toEqual(['read_note@3000']);
      expect(run.outcome).toMatchObject({ state: 'fulfilled', value: 'ok' });
    });

    it('waits at least until the HTTP date of a Retry-After, read against the clock’s wall time', async () => {
      await clock.advanceAsync(7_000);
      const httpDate = new Date(clock.wallNow() + 4_000).toUTCString();
      const run = start(
        tool(
          [
            () => Promise.reject(upstreamStatusError('read_note', 429, parseRetryAfter(httpDate, clock.wallNow()))),
            succeed('ok'),
          ],
          { retry: { baseDelayMs: 100, maxDelayMs: 2_000 } },
        ),
      );

      await clock.advanceAsync(3_999);
      expect(invocations).toHaveLength(1);

      await clock.advanceAsync(1);
      expect(invocations.map((invocation) => invocation.at)).toEqual([7_000, 11_000]);
      expect(run.outcome).toMatchObject({ state: 'fulfilled', value: 'ok' });
    });
  });

  describe('the call’s deadline', () => {
    it('starts no retry whose wait and attempt timeout would end past the deadline, and answers the last error at once', async () => {
      const run = start(
        tool([fail(transient('attempt 1 failed', 150)), fail(transient('attempt 2 failed', 100)), succeed('ok')], {
          timeoutMs: 100,
          retry: { maxAttempts: 5, baseDelayMs: 10, maxDelayMs: 10, deadlineMs: 300 },
        }),
      );

      await clock.advanceAsync(150);

      // Attempt 2 failed at 150: a retry at 250 could run until 350, past the deadline at 300.
      expect(invocations.map((invocation) => invocation.at)).toEqual([0, 150]);
      const error = errorOf(run.outcome);
      expect(error.message).toBe('attempt 2 failed');
      expect(error.attempts).toBe(2);
      expect(run.answeredAt()).toBe(150);

      await clock.advanceAsync(10_000);
      expect(invocations).toHaveLength(2);
      expect(retried).toEqual(['read_note@150']);
    });

    it('starts a retry whose attempt timeout ends exactly at the deadline', async () => {
      const run = start(
        tool([fail(transient('attempt 1 failed', 150)), fail(transient('attempt 2 failed', 50)), succeed('ok')], {
          timeoutMs: 100,
          retry: { maxAttempts: 5, baseDelayMs: 10, maxDelayMs: 10, deadlineMs: 300 },
        }),
      );

      await clock.advanceAsync(10_000);

      expect(invocations.map((invocation) => invocation.at)).toEqual([0, 150, 200]);
      expect(run.outcome).toMatchObject({ state: 'fulfilled', value: 'ok' });
    });

    it('measures the deadline from the first attempt, across attempts that take time', async () => {
      // Each attempt fails after 80 ms; with no backoff, attempts start at 0, 80, 160; one at 240 could end at 340.
      const slowFailure: Step = () =>
        new Promise((_resolve, reject) => clock.setTimer(() => reject(transient('slow failure')), 80));
      const run = start(
        tool([slowFailure], {
          timeoutMs: 100,
          retry: { maxAttempts: 10, baseDelayMs: 0, maxDelayMs: 0, deadlineMs: 300 },
        }),
      );

      await clock.advanceAsync(10_000);

      expect(invocations.map((invocation) => invocation.at)).toEqual([0, 80, 160]);
      expect(errorOf(run.outcome).attempts).toBe(3);
      expect(run.answeredAt()).toBe(240);
    });
  });

  describe('the retry budget', () => {
    it('answers the last error without a further attempt once the budget is spent', async () => {
      const flaky = tool([fail(transient('reset'))], {
        retry: { maxAttempts: 3 },
        budget: { percent: 0, minRetries: 1, windowMs: 10_000 },
      });

      const first = start(flaky);
      await clock.advanceAsync(1_000);
      expect(errorOf(first.outcome).attempts).toBe(2);
      expect(invocations).toHaveLength(2);

      const second = start(flaky);
      await clock.advanceAsync(1_000);
      const error = errorOf(second.outcome);
      expect(error.kind).toBe('transient');
      expect(error.attempts).toBe(1);
      expect(invocations).toHaveLength(3);
      expect(retried).toHaveLength(1);
    });

    it('retries again once the spent retries have left the window', async () => {
      const flaky = tool([fail(transient('reset'))], {
        retry: { maxAttempts: 2 },
        budget: { percent: 0, minRetries: 1, windowMs: 10_000 },
      });
      start(flaky);
      await clock.advanceAsync(1_000);
      expect(invocations).toHaveLength(2);

      await clock.advanceAsync(9_000);
      const later = start(flaky);
      await clock.advanceAsync(1_000);

      expect(errorOf(later.outcome).attempts).toBe(2);
      expect(invocations).toHaveLength(4);
    });

    it('does not spend the budget on failures that are not retried', async () => {
      const refusing = tool([fail(new ResilienceError('schema', 'refused'))], {
        budget: { percent: 0, minRetries: 1 },
      });
      start(refusing);
      start(refusing);
      await clock.advanceAsync(1_000);

      expect(refusing.retryBudget.window()).toEqual({ calls: 2, retries: 0 });
      expect(refusing.retryBudget.tryRetry()).toBe(true);
    });
  });

  describe('the call’s abort', () => {
    it('answers the abort reason at once during a backoff and starts no further attempt', async () => {
      const run = start(tool([fail(transient('reset', 1_000)), succeed('ok')]));
      await clock.advanceAsync(500);
      expect(invocations).toHaveLength(1);
      const reason = new ResilienceError('stopped', 'the client closed the connection before the call finished');

      run.abort.abort(reason);
      await settle();

      const error = errorOf(run.outcome);
      expect(error.kind).toBe('stopped');
      expect(error.message).toBe(reason.message);
      expect(error.attempts).toBe(1);
      expect(run.answeredAt()).toBe(500);
      expect(clock.pendingTimers).toBe(0);

      await clock.advanceAsync(10_000);
      expect(invocations).toHaveLength(1);
      expect(retried).toEqual([]);
      expect(run.settled.state).toBe('fulfilled');
    });

    it('answers the abort reason at once during an attempt and retries nothing', async () => {
      const run = start(tool([untilAborted, succeed('ok')], { idempotent: true }));
      await clock.advanceAsync(300);
      const reason = new ResilienceError('stopped', 'shutting down');

      run.abort.abort(reason);
      await settle();

      const error = errorOf(run.outcome);
      expect(error.kind).toBe('stopped');
      expect(error.attempts).toBe(1);
      expect(run.answeredAt()).toBe(300);
      await clock.advanceAsync(10_000);
      expect(invocations).toHaveLength(1);
    });

    it('starts no further attempt when the call is aborted while a timed-out handler is still running', async () => {
      const gate = deferred<unknown>();
      const run = start(
        tool([ignoringSignal(gate), succeed('ok')], {
          idempotent: true,
          timeoutMs: 100,
          retry: { baseDelayMs: 10, maxDelayMs: 10 },
        }),
      );
      await clock.advanceAsync(500);
      const reason = new ResilienceError('stopped', 'the client closed the connection before the call finished');

      run.abort.abort(reason);
      await clock.advanceAsync(100);
      gate.resolve('too late');
      await settle();
      await clock.advanceAsync(10_000);

      expect(invocations).toHaveLength(1);
      const error = errorOf(run.outcome);
      expect(error.kind).toBe('stopped');
      expect(error.attempts).toBe(1);
      expect(run.settled.state).toBe('fulfilled');
    });

    it('answers the abort at once while it waits for a timed-out handler to settle', async () => {
      const gate = deferred<unknown>();
      const run = start(
        tool([ignoringSignal(gate), succeed('ok')], {
          idempotent: true,
          timeoutMs: 100,
          retry: { baseDelayMs: 10, maxDelayMs: 10 },
        }),
      );
      await clock.advanceAsync(500);

      run.abort.abort(new ResilienceError('stopped', 'the client closed the connection before the call finished'));
      await settle();

      expect(errorOf(run.outcome).kind).toBe('stopped');
      expect(run.answeredAt()).toBe(500);
      expect(run.settled.state).toBe('pending');
      gate.resolve('too late');
      await settle();
      expect(run.settled.state).toBe('fulfilled');
    });
  });

  describe('the circuit breaker', () => {
    it('answers circuit_open with the attempts made when the circuit opens between retries', async () => {
      const run = start(
        tool([fail(transient('reset'))], {
          retry: { maxAttempts: 5 },
          breaker: { errorThresholdPercentage: 50, volumeThreshold: 2, resetTimeoutMs: 30_000 },
        }),
      );

      await clock.advanceAsync(10_000);

      const error = errorOf(run.outcome);
      expect(error.kind).toBe('circuit_open');
      expect(error.attempts).toBe(2);
      expect(error.retryAfterMs).toBeGreaterThan(0);
      expect(error.retryAfterMs).toBeLessThanOrEqual(30_000);
      expect(invocations).toHaveLength(2);
      expect(retried).toHaveLength(1);
    });

    it('answers circuit_open without calling the handler when the circuit is already open', async () => {
      const closed = tool([succeed('ok')]);
      closed.breaker.forceOpen();

      const run = start(closed);
      await clock.advanceAsync(10_000);

      const error = errorOf(run.outcome);
      expect(error.kind).toBe('circuit_open');
      expect(error.attempts).toBe(0);
      expect(invocations).toHaveLength(0);
    });

    it('answers circuit_open after the attempts made when the circuit is opened during a backoff', async () => {
      const flaky = tool([fail(transient('reset', 1_000)), succeed('ok')]);
      const run = start(flaky);
      await clock.advanceAsync(500);

      flaky.breaker.forceOpen();
      await clock.advanceAsync(10_000);

      const error = errorOf(run.outcome);
      expect(error.kind).toBe('circuit_open');
      expect(error.attempts).toBe(1);
      expect(invocations).toHaveLength(1);
    });

    it('counts every attempt, not every call, against the breaker', async () => {
      const flaky = tool([fail(transient('reset')), fail(transient('reset')), succeed('ok')]);
      start(flaky);

      // Both backoffs together are under 300 ms, well inside the breaker's 10 s window.
      await clock.advanceAsync(1_000);

      expect(flaky.breaker.snapshot()).toMatchObject({ state: 'closed', failures: 2, successes: 1, tenantsOpen: [] });
    });
  });

  describe('reporting retries', () => {
    it('reports each retry once, as it starts', async () => {
      const events: string[] = [];
      outcomes.onRetry((toolId) => events.push(`retry of ${toolId}`));
      const flaky = tool([fail(transient('reset')), fail(transient('reset')), succeed('ok')], { id: 'search_notes' });
      const handler = flaky.handler;
      const run = start({
        ...flaky,
        handler: (args, context) => {
          events.push(`attempt ${context.attempt}`);
          return handler(args, context);
        },
      });

      await clock.advanceAsync(10_000);

      expect(run.outcome.state).toBe('fulfilled');
      expect(events).toEqual(['attempt 1', 'retry of search_notes', 'attempt 2', 'retry of search_notes', 'attempt 3']);
    });

    it('reports no retry when none starts', async () => {
      start(tool([succeed('ok')]));
      start(tool([fail(new ResilienceError('not_found', 'no such note'))]));
      start(tool([fail(transient('reset'))], { retry: { maxAttempts: 1 } }));

      await clock.advanceAsync(10_000);

      expect(invocations).toHaveLength(3);
      expect(retried).toEqual([]);
    });
  });

  describe('money, one attempt at a time', () => {
    /** One attempt of the tools below costs 1 USD; acme's daily cap is `capUsd`. */
    const COST_MICROS = 1_000_000;
    const PERIOD = 'day:2026-01-01';
    let store: MemoryBudgetStore;
    let gate: BudgetGate;

    function budgetGate(capUsd: number): void {
      store = new MemoryBudgetStore(clock);
      gate = new BudgetGate(store, { budgets: { period: 'day', tenants: { acme: capUsd } } }, clock);
    }

    /** The first attempt's money held, as the pipeline holds it before the call is admitted. */
    function firstHeld(): ToolCallBudget {
      const times = { firstHoldMs: 10_000, retryHoldMs: 6_000, retryAfterMaxMs: 1_000 };
      const first = gate.reserve('acme', 1, times.firstHoldMs, times.retryAfterMaxMs);
      if (!first || isPromiseLike(first)) throw new Error('expected the first attempt held at once');
      return new ToolCallBudget(gate, 'acme', 1, times, first);
    }

    function usage(): BudgetUsage {
      return store.read('acme', PERIOD);
    }

    /** A step that notes the budget as the attempt runs, then plays `step`. */
    function noting(seen: BudgetUsage[], step: Step): Step {
      return (context) => {
        seen.push(usage());
        return step(context);
      };
    }

    it('answers only once the attempt’s money is settled, a success and a last failure alike', async () => {
      budgetGate(3);
      for (const step of [succeed('ok'), fail(new ResilienceError('not_found', 'no such note'))]) {
        const settling = deferred<void>();
        const real = firstHeld();
        // The store's answer comes when the test says: a Redis round trip, stretched.
        const slowToSettle: AttemptBudget = {
          holdNext: () => real.holdNext(),
          settle: (ran, failure) => settling.promise.then(() => real.settle(ran, failure)),
        };
        const run = start(tool([step], { retry: { maxAttempts: 1 } }), undefined, slowToSettle);

        await clock.advanceAsync(1_000);
        expect(run.outcome).toMatchObject({ state: 'pending' });

        settling.resolve();
        await clock.advanceAsync(0);
        expect(run.outcome.state).not.toBe('pending');
      }
      // Both reached the tool: each is charged.
      expect(usage()).toEqual({ spentMicros: 2 * COST_MICROS, reservedMicros: 0 });
    });

    it('holds each attempt’s cost while it runs, none during a backoff, and charges each attempt made', async () => {
      budgetGate(3);
      const seen: BudgetUsage[] = [];
      const failing = noting(seen, fail(transient('reset')));
      const run = start(tool([failing, failing, noting(seen, succeed('ok'))]), undefined, firstHeld());

      await clock.advanceAsync(10_000);

      expect(run.outcome).toMatchObject({ state: 'fulfilled', value: 'ok' });
      expect(seen).toEqual([
        { spentMicros: 0, reservedMicros: COST_MICROS },
        { spentMicros: COST_MICROS, reservedMicros: COST_MICROS },
        { spentMicros: 2 * COST_MICROS, reservedMicros: COST_MICROS },
      ]);
      expect(usage()).toEqual({ spentMicros: 3 * COST_MICROS, reservedMicros: 0 });
    });

    it('holds nothing while it waits to retry', async () => {
      budgetGate(3);
      const run = start(tool([fail(transient('reset', 1_000)), succeed('ok')]), undefined, firstHeld());

      await clock.advanceAsync(500);
      expect(usage()).toEqual({ spentMicros: COST_MICROS, reservedMicros: 0 });
      expect(invocations).toHaveLength(1);

      await clock.advanceAsync(10_000);
      expect(run.outcome.state).toBe('fulfilled');
      expect(usage()).toEqual({ spentMicros: 2 * COST_MICROS, reservedMicros: 0 });
    });

    it('does not make a retry whose cost cannot be held, and ends with the last failure, never overspending', async () => {
      budgetGate(2);
      const run = start(
        tool([fail(transient('attempt 1 failed')), fail(transient('attempt 2 failed'))]),
        undefined,
        firstHeld(),
      );

      await clock.advanceAsync(10_000);

      const error = errorOf(run.outcome);
      expect({ kind: error.kind, message: error.message, attempts: error.attempts }).toEqual({
        kind: 'transient',
        message: 'attempt 2 failed',
        attempts: 2,
      });
      expect(invocations).toHaveLength(2);
      expect(retried).toHaveLength(1);
      expect(usage()).toEqual({ spentMicros: 2 * COST_MICROS, reservedMicros: 0 });
      expect(run.settled.state).toBe('fulfilled');
    });

    it('does not retry while another call holds the money the retry needs', async () => {
      budgetGate(2);
      gate.reserve('acme', 1, 60_000);
      const run = start(tool([fail(transient('busy')), succeed('ok')]), undefined, firstHeld());

      await clock.advanceAsync(10_000);

      expect(errorOf(run.outcome)).toMatchObject({ kind: 'transient', message: 'busy', attempts: 1 });
      expect(invocations).toHaveLength(1);
      expect(usage()).toEqual({ spentMicros: COST_MICROS, reservedMicros: COST_MICROS });
    });

    it('retries when the money another call held is freed before the retry starts', async () => {
      budgetGate(2);
      const other = gate.reserve('acme', 1, 60_000) as BudgetReservation;
      const run = start(tool([fail(transient('busy', 1_000)), succeed('ok')]), undefined, firstHeld());
      await clock.advanceAsync(500);

      gate.settle(other, 0);
      await clock.advanceAsync(10_000);

      expect(run.outcome).toMatchObject({ state: 'fulfilled', value: 'ok' });
      expect(usage()).toEqual({ spentMicros: 2 * COST_MICROS, reservedMicros: 0 });
    });

    it('releases the first attempt’s hold when the open circuit refuses it', async () => {
      budgetGate(3);
      const refused = tool([succeed('ok')]);
      refused.breaker.forceOpen();

      const run = start(refused, undefined, firstHeld());
      await clock.advanceAsync(10_000);

      expect(errorOf(run.outcome)).toMatchObject({ kind: 'circuit_open', attempts: 0 });
      expect(usage()).toEqual({ spentMicros: 0, reservedMicros: 0 });
    });

    it('charges nothing for an attempt denied egress, and the attempts before it as they cost', async () => {
      budgetGate(3);
      const run = start(
        tool([fail(transient('reset')), fail(new ResilienceError('egress_denied', 'not allowed'))]),
        undefined,
        firstHeld(),
      );

      await clock.advanceAsync(10_000);

      expect(errorOf(run.outcome)).toMatchObject({ kind: 'egress_denied', attempts: 2 });
      expect(usage()).toEqual({ spentMicros: COST_MICROS, reservedMicros: 0 });
    });

    it('holds nothing once the call is stopped while waiting to retry', async () => {
      budgetGate(3);
      const abort = new LazyAbortController();
      const run = start(tool([fail(transient('reset', 1_000)), succeed('ok')]), abort, firstHeld());
      await clock.advanceAsync(500);

      abort.abort(new ResilienceError('stopped', 'shutting down'));
      await clock.advanceAsync(10_000);

      expect(errorOf(run.outcome)).toMatchObject({ kind: 'stopped', attempts: 1 });
      expect(usage()).toEqual({ spentMicros: COST_MICROS, reservedMicros: 0 });
    });
  });

  describe('settled', () => {
    it('resolves only after the handler of the last attempt has settled, after the answer', async () => {
      const gate = deferred<unknown>();
      const run = start(tool([ignoringSignal(gate)], { idempotent: false, timeoutMs: 100 }));

      await clock.advanceAsync(100);
      expect(errorOf(run.outcome).kind).toBe('timeout');
      await clock.advanceAsync(60_000);
      expect(run.settled.state).toBe('pending');

      gate.resolve('much too late');
      await settle();

      expect(run.settled.state).toBe('fulfilled');
    });

    it('resolves once the successful attempt has answered', async () => {
      const run = start(tool([fail(transient('reset')), succeed('ok')]));

      await clock.advanceAsync(10_000);

      expect(run.outcome.state).toBe('fulfilled');
      expect(run.settled.state).toBe('fulfilled');
      expect(clock.pendingTimers).toBe(0);
    });
  });
});

/** The two real HTTP pools of a minimal config (these tests never send a request). */
function testPools(clock: FakeClock): HttpPools {
  const parsed = parseConfig({ lanes: { main: { concurrency: 1, queueCapacity: 0 } } }, {});
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return new HttpPools(parsed.config, clock);
}
