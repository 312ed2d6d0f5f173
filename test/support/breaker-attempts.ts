import { deferred, ResilienceError } from '../../src/common';
import { FakeClock } from '../../src/common/fake-clock';
import { Breaker } from '../../src/circuit-breaker/breaker';
import type { BreakerSettings } from '../../src/circuit-breaker/breaker-settings';
import { advanceClocks, installFakeTimers } from './fake-timers';

// Attempts fired through a Breaker in virtual time (FakeClock and jest's fake timers, moved
// together by advanceClocks), for the breaker's unit specs.

/**
 * Breakers in virtual time for one spec file: each test gets a FakeClock (`clock`) with jest's
 * fake timers installed on it, and every breaker `breaker()` made (named `search`, of `settings`
 * with `overrides`) is shut down after it.
 */
export function breakersInVirtualTime(settings: BreakerSettings) {
  const made: Breaker[] = [];
  const fixture = {
    clock: new FakeClock(),
    breaker(overrides: Partial<BreakerSettings> = {}): Breaker {
      const created = new Breaker('search', { ...settings, ...overrides }, fixture.clock);
      made.push(created);
      return created;
    },
  };
  beforeEach(() => {
    fixture.clock = new FakeClock();
    installFakeTimers(fixture.clock);
  });
  afterEach(() => {
    for (const item of made.splice(0)) item.shutdown();
    jest.useRealTimers();
  });
  return fixture;
}

export const transient = () => new ResilienceError('transient', 'upstream answered 503');
export const stopped = () => new ResilienceError('stopped', 'the client went away');

/** How an attempt ended for its caller: its value, or the error it was rejected with. */
export function outcomeOf(fired: Promise<unknown>): Promise<unknown> {
  return fired.then(
    (value) => value,
    (error: unknown) => error,
  );
}

/** One attempt that fails at once with a counted failure, or with `error`. */
export function fail(target: Breaker, error: unknown = transient(), tenant?: string): Promise<unknown> {
  return outcomeOf(target.fire(() => Promise.reject(error), tenant));
}

/** One attempt that succeeds at once with 'ok'. */
export function succeed(target: Breaker, tenant?: string): Promise<unknown> {
  return outcomeOf(target.fire(async () => 'ok', tenant));
}

/**
 * One attempt that takes `ms` of virtual time, then succeeds with 'ok' (or fails with `error`):
 * both clocks move on by `ms` while it is out.
 */
export function lasting(
  target: Breaker,
  clock: FakeClock,
  ms: number,
  { error, tenant }: { error?: unknown; tenant?: string } = {},
): Promise<unknown> {
  const answer = deferred<string>();
  const fired = outcomeOf(target.fire(() => answer.promise, tenant));
  advanceClocks(clock, ms);
  if (error === undefined) answer.resolve('ok');
  else answer.reject(error);
  return fired;
}

/** What `fire` refuses with now, checking the action never ran. */
export async function refusalOf(target: Breaker, tenant?: string): Promise<ResilienceError> {
  const action = jest.fn(async () => 'ran');
  const reason = await outcomeOf(target.fire(action, tenant));
  expect(action).not.toHaveBeenCalled();
  expect(reason).toBeInstanceOf(ResilienceError);
  return reason as ResilienceError;
}
