import { FakeClock } from '../common/fake-clock';
import { advanceClocks, installFakeTimers } from '../../test/support/fake-timers';
import type { Attempt, BreakerEngine, EngineListener, RejectionVerdict } from './breaker-engine';
import { OpossumEngine } from './opossum-engine';
import { RollingWindow } from './rolling-window';

// The contract a Breaker relies on of its engine (breaker-engine.ts), checked on each engine
// there is: opossum's today. Another engine passes these tests before it replaces it.

const RESET_MS = 1_000;

/** An engine on `window`, opening past 50 % of at least 2 attempts, reporting to `listener`. */
type MakeEngine = (window: RollingWindow, listener: EngineListener) => BreakerEngine;

/** A listener that records what it hears, and judges each rejection by the verdict the error carries. */
function recorder(window: RollingWindow) {
  const heard: string[] = [];
  const listener: EngineListener = {
    judge: (error) => (error as { verdict: RejectionVerdict }).verdict,
    countedFailure: (attempt) => heard.push(`countedFailure ${attempt.name} (window: ${window.failures})`),
    succeeded: () => heard.push('succeeded'),
    uncounted: (attempt, verdict) => heard.push(`uncounted ${attempt.name} ${verdict}`),
    opened: () => heard.push('opened'),
    halfOpened: () => heard.push('halfOpened'),
    closed: () => heard.push('closed'),
  };
  return { heard, listener };
}

/** An attempt named `name` that rejects with an error the recorder judges `verdict`. */
function rejecting(name: string, verdict: RejectionVerdict): Attempt {
  const attempt = { [name]: () => Promise.reject(Object.assign(new Error(name), { verdict })) }[name]!;
  return attempt;
}

const never: Attempt = () => new Promise<never>(() => undefined);

function describeBreakerEngine(kind: string, make: MakeEngine): void {
  describe(`${kind} as a BreakerEngine`, () => {
    let clock: FakeClock;
    let window: RollingWindow;
    const made: BreakerEngine[] = [];

    function engine() {
      const { heard, listener } = recorder(window);
      const subject = make(window, listener);
      made.push(subject);
      return { subject, heard };
    }

    /** An engine opened, then half-opened by its own timer. */
    function halfOpened() {
      const fresh = engine();
      fresh.subject.open();
      advanceClocks(clock, RESET_MS);
      fresh.heard.splice(0);
      return fresh;
    }

    beforeEach(() => {
      clock = new FakeClock();
      installFakeTimers(clock);
      window = new RollingWindow(clock, 10_000, 10);
    });

    afterEach(() => {
      for (const item of made.splice(0)) item.shutdown();
      jest.useRealTimers();
    });

    it('runs each attempt before fire() returns, and counts a resolved one a success', async () => {
      const { subject, heard } = engine();
      const action = jest.fn(async () => 'ok');

      const fired = subject.fire(action);
      expect(action).toHaveBeenCalledTimes(1);

      await expect(fired).resolves.toBe('ok');
      expect(heard).toEqual(['succeeded']);
      expect([window.failures, window.successes]).toEqual([0, 1]);
    });

    it('reports a counted failure once the window holds it, then opens past the threshold', async () => {
      const { subject, heard } = engine();
      await subject.fire(rejecting('first', 'failure')).catch(() => undefined);
      expect(heard).toEqual(['countedFailure first (window: 1)']);

      await subject.fire(rejecting('second', 'failure')).catch(() => undefined);

      expect(heard).toEqual(['countedFailure first (window: 1)', 'countedFailure second (window: 2)', 'opened']);
      expect(window.failures).toBe(2);
    });

    it('counts an answered rejection a success, and one stopped or a tenant’s own nowhere', async () => {
      const { subject, heard } = engine();
      const answered = rejecting('answered', 'answered');
      await expect(subject.fire(answered)).rejects.toThrow('answered');
      await subject.fire(rejecting('left', 'stopped')).catch(() => undefined);
      await subject.fire(rejecting('own', 'own_failure')).catch(() => undefined);

      expect(heard).toEqual(['succeeded', 'uncounted left stopped', 'uncounted own own_failure']);
      expect([window.failures, window.successes]).toEqual([0, 1]);
    });

    it('half-opens after the open time set before it opened', () => {
      const { subject, heard } = engine();
      subject.setOpenTime(3 * RESET_MS);
      subject.open();
      advanceClocks(clock, 3 * RESET_MS - 1);
      expect(heard).toEqual(['opened']);

      advanceClocks(clock, 1);

      expect(heard).toEqual(['opened', 'halfOpened']);
    });

    it('half open, runs every attempt the breaker fires and closes on nothing of its own', async () => {
      const { subject, heard } = halfOpened();
      const second = jest.fn(async () => 'ok');

      void subject.fire(never);
      await subject.fire(second);

      expect(second).toHaveBeenCalledTimes(1);
      expect(heard).toEqual(['succeeded']);
    });

    it('half open, opens again on a counted failure', async () => {
      const { subject, heard } = halfOpened();

      await subject.fire(rejecting('probe', 'failure')).catch(() => undefined);

      expect(heard).toEqual(['countedFailure probe (window: 1)', 'opened']);
    });

    it('closes when told, emptying the window, and reports each change once', async () => {
      const { subject, heard } = engine();
      await subject.fire(async () => 'ok');
      subject.open();
      subject.open();
      subject.close();
      subject.close();

      expect(heard).toEqual(['succeeded', 'opened', 'closed']);
      expect([window.failures, window.successes]).toEqual([0, 0]);
    });

    it('sets no timer of its own per attempt, and none is left once shut down', () => {
      const { subject } = engine();
      void subject.fire(never);
      expect(jest.getTimerCount()).toBe(0);
      subject.open();
      expect(jest.getTimerCount()).toBe(1);

      subject.shutdown();

      expect(jest.getTimerCount()).toBe(0);
    });
  });
}

describeBreakerEngine(
  'OpossumEngine',
  (window, listener) =>
    new OpossumEngine(
      'search',
      window,
      { errorThresholdPercentage: 50, volumeThreshold: 2, resetTimeoutMs: RESET_MS },
      listener,
    ),
);
