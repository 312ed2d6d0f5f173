import type { FakeClock } from '../../src/common/fake-clock';

/**
 * What stays real: the queues that I/O completes through. They never wait for time, only for
 * their turn, and an app on loopback answers nothing without them: undici resumes its request
 * pipeline with setImmediate and hands results on with queueMicrotask, Fastify runs its hooks
 * and sends replies on process.nextTick, and FakeClock.advanceAsync (which closeOnFakeClock
 * uses) waits for a setImmediate. Faking any one of them hung the first request of
 * test/circuit-breaker/circuits.e2e-spec.ts.
 */
const KEPT_REAL: FakeableAPI[] = ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask'];

/**
 * Jest's fake timers for code that keeps time both ways: on the injected FakeClock, and on
 * Node's own timers because it cannot take a clock. A breaker is such code: its rolling window
 * and Retry-After go by the injected clock, while opossum's open → half-open timer is a
 * `setTimeout` of its own (and opossum reads `Date.now()`). Everything that measures or waits
 * for time is faked (timers, intervals, Date, performance, hrtime), and jest's Date starts at
 * `clock.wallNow()`; the I/O queues stay real, so an app on a real loopback socket still
 * answers. Move time with {@link advanceClocks}; undo with `jest.useRealTimers()`.
 */
export function installFakeTimers(clock: FakeClock): void {
  jest.useFakeTimers({ doNotFake: KEPT_REAL, now: clock.wallNow() });
}

/**
 * Moves virtual time on by `ms` on both clocks: the FakeClock first, then jest's (firing
 * opossum's timers that fall due), in one synchronous step, so `Date.now()` keeps matching
 * `clock.wallNow()`, a timer of opossum's finds the FakeClock already at its deadline, and
 * whatever a timer resumes (promise callbacks) runs with both clocks at the new time.
 */
export function advanceClocks(clock: FakeClock, ms: number): void {
  clock.advance(ms);
  jest.advanceTimersByTime(ms);
}

/**
 * Waits, turn by turn of the event loop, until `check` holds: under {@link installFakeTimers}
 * every timer is held, so this polls on setImmediate, which stays real.
 */
export async function turnsUntil(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let turn = 0; turn < 20_000; turn++) {
    if (await check()) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error(`gave up waiting for ${what}`);
}
