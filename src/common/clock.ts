/** Opaque handle of a timer started by a {@link Clock}. */
export type TimerHandle = unknown;

/**
 * The one source of time. Mechanisms take a Clock instead of calling `Date.now()`,
 * `performance.now()` or `setTimeout`, so tests run them in virtual time.
 */
export interface Clock {
  /** Monotonic milliseconds, for intervals, TTLs and refills. */
  now(): number;
  /** Epoch milliseconds, for calendar windows and timestamps shown to people. */
  wallNow(): number;
  /** Calls `callback` once, `delayMs` milliseconds of this clock's time from now. */
  setTimer(callback: () => void, delayMs: number): TimerHandle;
  /** Cancels a timer; cancelling one that already fired or was cancelled does nothing. */
  clearTimer(handle: TimerHandle): void;
}

/** Injection token of the {@link Clock}. */
export const CLOCK = Symbol('CLOCK');

/** The real clock: `performance.now()`, `Date.now()` and Node timers. */
export class SystemClock implements Clock {
  now(): number {
    return performance.now();
  }

  wallNow(): number {
    // eslint-disable-next-line no-restricted-syntax -- the one place that reads the system clock
    return Date.now();
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    return setTimeout(callback, delayMs);
  }

  clearTimer(handle: TimerHandle): void {
    clearTimeout(handle as NodeJS.Timeout);
  }
}

/** Resolves after `delayMs` of the clock's time; used where waiting is the job (drain deadlines). */
export function sleep(clock: Clock, delayMs: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(resolve, delayMs));
}
