import { track } from '../../test/support/deferred';
import { isResilienceError, LazyAbortController, ResilienceError } from '../common';
import { FakeClock } from '../common/fake-clock';
import { ChaosDecider, type ChaosSettings } from './chaos-decider';
import type { ChaosInjection } from './chaos-injection';
import type { WrappedAttempt } from '../dispatch';
import { ToolChaos, type ToolFaultKind } from './tool-chaos';

describe('ToolChaos', () => {
  let clock: FakeClock;
  let injected: ChaosInjection[];
  let runs: number;

  beforeEach(() => {
    clock = new FakeClock();
    injected = [];
    runs = 0;
  });

  function chaos(settings: ChaosSettings<ToolFaultKind>): ToolChaos {
    return new ToolChaos('search', new ChaosDecider(settings, () => 0.5), clock, (item) => injected.push(item));
  }

  function attempt(abort = new LazyAbortController()): WrappedAttempt {
    return { callId: 'call-1', lane: 'main', abort };
  }

  const handler = () => {
    runs++;
    return { found: 3 };
  };

  it('calls the handler at once and returns its answer untouched when nothing is drawn', () => {
    const answer = chaos({ faultRate: 0.4, faultKind: 'transient' }).attempt(handler, attempt());

    expect(answer).toEqual({ found: 3 });
    expect(runs).toBe(1);
    expect(injected).toEqual([]);
  });

  it('fails transient as an upstream 503 would, without calling the handler', async () => {
    const answer = chaos({ faultRate: 1, faultKind: 'transient' }).attempt(handler, attempt());

    const error = await (answer as Promise<unknown>).catch((reason: unknown) => reason);
    expect(isResilienceError(error)).toBe(true);
    expect(error).toMatchObject({
      kind: 'transient',
      status: 502,
      message: "upstream of tool 'search' answered HTTP 503 (injected by chaos)",
    });
    expect(runs).toBe(0);
    expect(injected).toEqual([{ target: 'search', kind: 'transient', callId: 'call-1', lane: 'main' }]);
  });

  it('delays the handler by latencyMs of the clock, then runs it', async () => {
    const answer = track(chaos({ latencyRate: 1, latencyMs: 2_000 }).attempt(handler, attempt()) as Promise<unknown>);

    await clock.advanceAsync(1_999);
    expect(answer.state).toBe('pending');
    expect(runs).toBe(0);

    await clock.advanceAsync(1);
    expect(answer).toMatchObject({ state: 'fulfilled', value: { found: 3 } });
    expect(runs).toBe(1);
    expect(injected).toEqual([{ target: 'search', kind: 'latency', callId: 'call-1', lane: 'main' }]);
  });

  it('ends the delay as soon as the attempt is aborted, with its reason, and never runs the handler', async () => {
    const abort = new LazyAbortController();
    const answer = track(
      chaos({ latencyRate: 1, latencyMs: 5_000 }).attempt(handler, attempt(abort)) as Promise<unknown>,
    );
    await clock.advanceAsync(1_000);

    const reason = new ResilienceError('timeout', 'the attempt timed out');
    abort.abort(reason);
    await clock.advanceAsync(0);

    expect(answer).toMatchObject({ state: 'rejected', reason });
    expect(clock.pendingTimers).toBe(0);
    await clock.advanceAsync(10_000);
    expect(runs).toBe(0);
  });

  it('delays first, then fails: the fault is reported only once the delay has passed', async () => {
    const answer = track(
      chaos({ latencyRate: 1, latencyMs: 300, faultRate: 1, faultKind: 'transient' }).attempt(
        handler,
        attempt(),
      ) as Promise<unknown>,
    );
    await clock.advanceAsync(299);
    expect(injected.map((item) => item.kind)).toEqual(['latency']);

    await clock.advanceAsync(1);
    expect(answer.state).toBe('rejected');
    expect(injected.map((item) => item.kind)).toEqual(['latency', 'transient']);
    expect(runs).toBe(0);
  });

  it('hangs on timeout until the attempt is aborted, and never runs the handler', async () => {
    const abort = new LazyAbortController();
    const answer = track(
      chaos({ faultRate: 1, faultKind: 'timeout' }).attempt(handler, attempt(abort)) as Promise<unknown>,
    );

    await clock.advanceAsync(3_600_000);
    expect(answer.state).toBe('pending');
    expect(clock.pendingTimers).toBe(0);

    const reason = new ResilienceError('timeout', "tool 'search' did not finish within 1000 ms");
    abort.abort(reason);
    await clock.advanceAsync(0);
    expect(answer).toMatchObject({ state: 'rejected', reason });
    expect(runs).toBe(0);
    expect(injected.map((item) => item.kind)).toEqual(['timeout']);
  });
});
