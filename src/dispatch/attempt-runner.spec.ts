import { Logger } from '@nestjs/common';
import { deferred, track } from '../../test/support/deferred';
import { ChaosRegistry } from '../chaos';
import { Breaker, DEFAULT_BREAKER_SETTINGS } from '../circuit-breaker';
import { isResilienceError, LazyAbortController, ResilienceError } from '../common';
import { FakeClock, settle } from '../common/fake-clock';
import { parseConfig } from '../config';
import type { ToolChaosConfig } from './tool-chaos.options';
import { HttpPools } from '../containment';
import { type AttemptCall, AttemptRunner } from './attempt-runner';
import { RetryBudget } from '../retry/retry-budget';
import { RetryPolicy } from '../retry/retry-policy';
import type { ToolContext, ToolDefinition, ToolHandler } from './tool';

const TIMEOUT_MS = 1_000;

describe('AttemptRunner', () => {
  let pools: HttpPools;
  let clock: FakeClock;
  let runner: AttemptRunner;
  let breakers: Breaker[];
  let warnings: string[];

  beforeEach(() => {
    clock = new FakeClock();
    pools = testPools(clock);
    runner = new AttemptRunner(clock, pools);
    breakers = [];
    warnings = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => {
      warnings.push(String(message));
    });
  });

  afterEach(async () => {
    await pools.onApplicationShutdown();
    for (const breaker of breakers) breaker.shutdown();
    jest.restoreAllMocks();
  });

  function tool(handler: ToolHandler, id = 'read_note'): ToolDefinition {
    const breaker = new Breaker(id, DEFAULT_BREAKER_SETTINGS, clock);
    breakers.push(breaker);
    return {
      id,
      kind: 'builtin',
      lane: 'default',
      description: undefined,
      timeoutMs: TIMEOUT_MS,
      idempotent: true,
      containment: 'allow',
      costUsd: 0,
      tokens: 0,
      validate: () => {},
      retry: new RetryPolicy({ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 2_000, deadlineMs: 10_000 }),
      retryBudget: new RetryBudget({ percent: 20, minRetries: 3, windowMs: 10_000 }, clock),
      breaker,
      handler,
    };
  }

  function call(overrides: Partial<AttemptCall> = {}): AttemptCall {
    return { callId: 'call-1', tenant: 'acme', abort: new LazyAbortController(), pool: 'normal', ...overrides };
  }

  /** A handler that never answers and ignores its signal; `contexts` collects what it was given. */
  function hangingHandler(contexts: ToolContext[] = []): { handler: ToolHandler; release(value?: unknown): void } {
    const gate = deferred<unknown>();
    return {
      handler: (_args, context) => {
        contexts.push(context);
        return gate.promise;
      },
      release: (value) => gate.resolve(value),
    };
  }

  describe('the attempt deadline', () => {
    it('aborts the handler’s signal at the deadline, before anyone hears timeout', async () => {
      const events: string[] = [];
      const { handler } = hangingHandler();
      const started = runner.start(
        tool((args, context) => {
          context.signal.addEventListener('abort', () => {
            events.push(`signal aborted at ${clock.now()}: ${(context.signal.reason as ResilienceError).kind}`);
          });
          return handler(args, context);
        }),
        {},
        call(),
        TIMEOUT_MS,
      );
      const outcome = track(
        started.outcome.catch((error: unknown) => {
          events.push(`outcome rejected at ${clock.now()}: ${(error as ResilienceError).kind}`);
          throw error;
        }),
      );

      await clock.advanceAsync(TIMEOUT_MS - 1);
      expect(events).toEqual([]);
      expect(outcome.state).toBe('pending');

      await clock.advanceAsync(1);

      expect(events).toEqual([
        `signal aborted at ${TIMEOUT_MS}: timeout`,
        `outcome rejected at ${TIMEOUT_MS}: timeout`,
      ]);
      expect(outcome.state).toBe('rejected');
      const error = outcome.reason as ResilienceError;
      expect(isResilienceError(error)).toBe(true);
      expect(error.kind).toBe('timeout');
      expect(error.message).toBe(`tool 'read_note' did not finish within ${TIMEOUT_MS} ms`);
    });

    it('has the handler’s signal aborted by the time the timeout is observed', async () => {
      const contexts: ToolContext[] = [];
      const { handler } = hangingHandler(contexts);
      const started = runner.start(tool(handler), {}, call(), TIMEOUT_MS);
      const seen: boolean[] = [];
      started.outcome.catch(() => seen.push(contexts[0]!.signal.aborted));

      await clock.advanceAsync(TIMEOUT_MS);

      expect(seen).toEqual([true]);
    });

    it('answers timeout at the deadline while a handler that ignores its signal runs on, and settles only when it does', async () => {
      const { handler, release } = hangingHandler();
      const started = runner.start(tool(handler), {}, call(), TIMEOUT_MS);
      const outcome = track(started.outcome);
      const settled = track(started.settled);

      await clock.advanceAsync(TIMEOUT_MS);
      expect(outcome.state).toBe('rejected');
      expect((outcome.reason as ResilienceError).kind).toBe('timeout');
      expect(settled.state).toBe('pending');

      await clock.advanceAsync(60_000);
      expect(settled.state).toBe('pending');

      release('late result');
      await settle();

      expect(settled.state).toBe('fulfilled');
      expect((outcome.reason as ResilienceError).kind).toBe('timeout');
    });

    it('settles without rejecting when the handler fails after its deadline', async () => {
      const gate = deferred<unknown>();
      const started = runner.start(
        tool(() => gate.promise),
        {},
        call(),
        TIMEOUT_MS,
      );
      const outcome = track(started.outcome);
      const settled = track(started.settled);
      await clock.advanceAsync(TIMEOUT_MS);

      gate.reject(new Error('gave up late'));
      await settle();

      expect(settled.state).toBe('fulfilled');
      expect((outcome.reason as ResilienceError).kind).toBe('timeout');
    });

    it('leaves the signal alone and no timer behind once the handler answered', async () => {
      const contexts: ToolContext[] = [];
      const started = runner.start(
        tool((_args, context) => {
          contexts.push(context);
          return Promise.resolve({ text: 'hello' });
        }),
        {},
        call(),
        TIMEOUT_MS,
      );

      await expect(started.outcome).resolves.toEqual({ text: 'hello' });
      await expect(started.settled).resolves.toBeUndefined();
      expect(clock.pendingTimers).toBe(0);
      await clock.advanceAsync(TIMEOUT_MS * 10);
      expect(contexts[0]!.signal.aborted).toBe(false);
    });

    it('answers a synchronous result', async () => {
      const started = runner.start(
        tool(() => 42),
        {},
        call(),
        TIMEOUT_MS,
      );

      await expect(started.outcome).resolves.toBe(42);
      await expect(started.settled).resolves.toBeUndefined();
    });
  });

  describe('the call’s abort', () => {
    it('rejects with the abort reason at once and aborts the handler’s signal with it', async () => {
      const contexts: ToolContext[] = [];
      const { handler, release } = hangingHandler(contexts);
      const abort = new LazyAbortController();
      const started = runner.start(tool(handler), {}, call({ abort }), TIMEOUT_MS);
      const outcome = track(started.outcome);
      const settled = track(started.settled);
      const reason = new ResilienceError('stopped', 'the client closed the connection before the call finished');

      abort.abort(reason);
      await settle();

      expect(clock.now()).toBe(0);
      expect(outcome.state).toBe('rejected');
      expect(outcome.reason).toBe(reason);
      expect(contexts[0]!.signal.aborted).toBe(true);
      expect(contexts[0]!.signal.reason).toBe(reason);
      expect(clock.pendingTimers).toBe(0);
      expect(settled.state).toBe('pending');

      release();
      await settle();
      expect(settled.state).toBe('fulfilled');
    });

    it('answers stopped for an abort whose reason is not a ResilienceError', async () => {
      const { handler } = hangingHandler();
      const abort = new LazyAbortController();
      const started = runner.start(tool(handler), {}, call({ abort }), TIMEOUT_MS);
      const outcome = track(started.outcome);

      abort.abort(new Error('shutting down'));
      await settle();

      expect(outcome.state).toBe('rejected');
      expect((outcome.reason as ResilienceError).kind).toBe('stopped');
    });

    it('rejects with the abort reason at once when the call was aborted before the attempt started', async () => {
      const contexts: ToolContext[] = [];
      const { handler } = hangingHandler(contexts);
      const abort = new LazyAbortController();
      const reason = new ResilienceError('stopped', 'the client closed the connection before the call finished');
      abort.abort(reason);

      const started = runner.start(tool(handler), {}, call({ abort }), TIMEOUT_MS);
      const outcome = track(started.outcome);
      await settle();

      expect(outcome.state).toBe('rejected');
      expect(outcome.reason).toBe(reason);
      expect(contexts.every((context) => context.signal.aborted)).toBe(true);
      expect(clock.pendingTimers).toBe(0);
    });

    it('ignores an abort of the call after the attempt answered', async () => {
      const abort = new LazyAbortController();
      const contexts: ToolContext[] = [];
      const started = runner.start(
        tool((_args, context) => {
          contexts.push(context);
          return 'done';
        }),
        {},
        call({ abort }),
        TIMEOUT_MS,
      );
      await expect(started.outcome).resolves.toBe('done');

      abort.abort(new ResilienceError('stopped', 'late'));

      expect(contexts[0]!.signal.aborted).toBe(false);
    });
  });

  describe('the handler’s errors', () => {
    it.each([
      [
        'throws',
        () => {
          throw new Error('note 4711 of patient Jane Doe is locked');
        },
      ],
      ['rejects', () => Promise.reject(new TypeError('note 4711 of patient Jane Doe is locked'))],
      ['rejects with a string', () => Promise.reject('note 4711 of patient Jane Doe is locked')],
    ] as Array<[string, ToolHandler]>)(
      'answers internal without the message when the handler %s unexpectedly',
      async (_how, handler) => {
        const started = runner.start(tool(handler), {}, call(), TIMEOUT_MS);

        const error = (await started.outcome.then(
          () => undefined,
          (reason: unknown) => reason,
        )) as ResilienceError;

        expect(isResilienceError(error)).toBe(true);
        expect(error.kind).toBe('internal');
        expect(error.message).toBe("tool 'read_note' failed");
        expect(error.cause).toBeUndefined();
        expect(JSON.stringify(warnings)).not.toContain('Jane Doe');
        expect(warnings).toHaveLength(1);
        await expect(started.settled).resolves.toBeUndefined();
      },
    );

    it('passes a ResilienceError of the handler through as it is', async () => {
      const refusal = new ResilienceError('not_found', 'no such note', { retryAfterMs: 5 });
      const started = runner.start(
        tool(() => Promise.reject(refusal)),
        {},
        call(),
        TIMEOUT_MS,
      );

      await expect(started.outcome).rejects.toBe(refusal);
      expect(warnings).toEqual([]);
    });

    it('passes a ResilienceError thrown synchronously through as it is', async () => {
      const refusal = new ResilienceError('schema', 'the upstream refused the arguments');
      const started = runner.start(
        tool(() => {
          throw refusal;
        }),
        {},
        call(),
        TIMEOUT_MS,
      );

      await expect(started.outcome).rejects.toBe(refusal);
      await expect(started.settled).resolves.toBeUndefined();
    });
  });

  describe('the handler’s context', () => {
    it('carries the call id, tool id, tenant, attempt and idempotency key', async () => {
      const contexts: ToolContext[] = [];
      const started = runner.start(
        tool((_args, context) => {
          contexts.push(context);
          return 'ok';
        }, 'search_notes'),
        { query: 'x' },
        call({ callId: 'c-42', tenant: 'globex', idempotencyKey: 'scoped-key-digest' }),
        TIMEOUT_MS,
        3,
      );
      await started.outcome;

      expect(contexts).toHaveLength(1);
      expect(contexts[0]).toMatchObject({
        callId: 'c-42',
        toolId: 'search_notes',
        tenant: 'globex',
        attempt: 3,
        idempotencyKey: 'scoped-key-digest',
      });
      expect(contexts[0]!.signal).toBeInstanceOf(AbortSignal);
    });

    it('counts a first attempt as 1 and has no idempotency key when the call has none', async () => {
      const contexts: ToolContext[] = [];
      const started = runner.start(
        tool((_args, context) => {
          contexts.push(context);
          return 'ok';
        }),
        {},
        call(),
        TIMEOUT_MS,
      );
      await started.outcome;

      expect(contexts[0]!.attempt).toBe(1);
      expect(contexts[0]!.idempotencyKey).toBeUndefined();
    });

    it('passes the arguments to the handler', async () => {
      const seen: unknown[] = [];
      const started = runner.start(
        tool((args) => {
          seen.push(args);
          return 'ok';
        }),
        { noteId: 'n-1', limit: 3 },
        call(),
        TIMEOUT_MS,
      );
      await started.outcome;

      expect(seen).toEqual([{ noteId: 'n-1', limit: 3 }]);
    });

    it('gives every attempt its own signal, so aborting one leaves the call and other attempts alone', async () => {
      const contexts: ToolContext[] = [];
      const abort = new LazyAbortController();
      const first = hangingHandler(contexts);
      const second = hangingHandler(contexts);
      runner.start(tool(first.handler), {}, call({ abort }), TIMEOUT_MS).outcome.catch(() => {});
      await clock.advanceAsync(500);
      const later = track(runner.start(tool(second.handler), {}, call({ abort }), TIMEOUT_MS, 2).outcome);

      await clock.advanceAsync(500);

      expect(contexts[0]!.signal.aborted).toBe(true);
      expect(contexts[1]!.signal.aborted).toBe(false);
      expect(abort.aborted).toBe(false);
      expect(later.state).toBe('pending');
      await clock.advanceAsync(500);
      expect(later.state).toBe('rejected');
    });
  });

  describe('chaos', () => {
    /** A runner whose tool `flaky` has these chaos settings, chaos being `enabled`. */
    function chaosRunner(settings: ToolChaosConfig, enabled = true): AttemptRunner {
      const chaos = new ChaosRegistry({ enabled, tools: { flaky: settings } }, clock, () => 0.5);
      return new AttemptRunner(clock, pools, chaos);
    }

    function counted(): { handler: ToolHandler; runs: () => number } {
      let runs = 0;
      return {
        handler: () => {
          runs++;
          return 'answered';
        },
        runs: () => runs,
      };
    }

    it('fails an attempt of a tool with a transient fault without running its handler', async () => {
      const { handler, runs } = counted();
      const started = chaosRunner({ faultRate: 1, faultKind: 'transient' }).start(
        tool(handler, 'flaky'),
        {},
        call(),
        TIMEOUT_MS,
      );

      const error = await started.outcome.catch((reason: unknown) => reason);

      expect(error).toMatchObject({
        kind: 'transient',
        message: "upstream of tool 'flaky' answered HTTP 503 (injected by chaos)",
      });
      expect(runs()).toBe(0);
      expect(warnings).toEqual([]);
    });

    it('times out an attempt whose injected latency outlasts its timeout, with the real timeout error', async () => {
      const { handler, runs } = counted();
      const started = chaosRunner({ latencyRate: 1, latencyMs: 5 * TIMEOUT_MS }).start(
        tool(handler, 'flaky'),
        {},
        call(),
        TIMEOUT_MS,
      );
      const outcome = track(started.outcome);
      const settled = track(started.settled);

      await clock.advanceAsync(TIMEOUT_MS - 1);
      expect(outcome.state).toBe('pending');
      await clock.advanceAsync(1);

      expect(outcome.state).toBe('rejected');
      expect(outcome.reason).toMatchObject({
        kind: 'timeout',
        message: `tool 'flaky' did not finish within ${TIMEOUT_MS} ms`,
      });
      // The wait was ended by the attempt's abort: nothing of it is left on the clock.
      expect(settled.state).toBe('fulfilled');
      expect(clock.pendingTimers).toBe(0);
      await clock.advanceAsync(10 * TIMEOUT_MS);
      expect(runs()).toBe(0);
    });

    it('runs the handler after a latency shorter than the timeout', async () => {
      const { handler, runs } = counted();
      const started = chaosRunner({ latencyRate: 1, latencyMs: TIMEOUT_MS / 2 }).start(
        tool(handler, 'flaky'),
        {},
        call(),
        TIMEOUT_MS,
      );
      const outcome = track(started.outcome);

      await clock.advanceAsync(TIMEOUT_MS / 2 - 1);
      expect(runs()).toBe(0);
      await clock.advanceAsync(1);

      expect(outcome).toMatchObject({ state: 'fulfilled', value: 'answered' });
      expect(runs()).toBe(1);
    });

    it('hangs a timeout fault until the attempt’s own deadline fails it', async () => {
      const { handler, runs } = counted();
      const started = chaosRunner({ faultRate: 1, faultKind: 'timeout' }).start(
        tool(handler, 'flaky'),
        {},
        call(),
        TIMEOUT_MS,
      );
      const outcome = track(started.outcome);

      await clock.advanceAsync(TIMEOUT_MS - 1);
      expect(outcome.state).toBe('pending');
      await clock.advanceAsync(1);

      expect(outcome.reason).toMatchObject({ kind: 'timeout' });
      await expect(started.settled).resolves.toBeUndefined();
      expect(runs()).toBe(0);
    });

    it('leaves other tools alone, and every tool while chaos is not enabled', async () => {
      const other = counted();
      const disabled = counted();

      const otherOutcome = chaosRunner({ faultRate: 1, faultKind: 'transient' }).start(
        tool(other.handler, 'other'),
        {},
        call(),
        TIMEOUT_MS,
      );
      const disabledOutcome = chaosRunner({ faultRate: 1, faultKind: 'transient' }, false).start(
        tool(disabled.handler, 'flaky'),
        {},
        call(),
        TIMEOUT_MS,
      );

      await expect(otherOutcome.outcome).resolves.toBe('answered');
      await expect(disabledOutcome.outcome).resolves.toBe('answered');
      expect([other.runs(), disabled.runs()]).toEqual([1, 1]);
    });
  });
});

/** The two real HTTP pools of a minimal config (these tests never send a request). */
function testPools(clock: FakeClock): HttpPools {
  const parsed = parseConfig({ lanes: { main: { concurrency: 1, queueCapacity: 0 } } }, {});
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return new HttpPools(parsed.config, clock);
}
