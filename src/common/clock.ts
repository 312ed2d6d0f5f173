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
  /**
   * Calls `callback` once, `delayMs` milliseconds of this clock's time from now. With `unref`,
   * a pending timer does not keep the process alive (a mechanism's own background timer).
   */
  setTimer(callback: () => void, delayMs: number, options?: TimerOptions): TimerHandle;
  /** Cancels a timer; cancelling one that already fired or was cancelled does nothing. */
  clearTimer(handle: TimerHandle): void;
}

export interface TimerOptions {
  /** @default false */
  unref?: boolean;
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

  setTimer(callback: () => void, delayMs: number, options?: TimerOptions): TimerHandle {
    const timer = setTimeout(callback, delayMs);
    if (options?.unref) timer.unref();
    return timer;
  }

  clearTimer(handle: TimerHandle): void {
    clearTimeout(handle as NodeJS.Timeout);
  }
}

/**
 * Resolves after `delayMs` of the clock's time; rejects with the signal's reason as soon as
 * `signal` aborts (at once if it already has), and clears its timer then.
 */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clock.clearTimer(timer);
      reject(signal!.reason);
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
