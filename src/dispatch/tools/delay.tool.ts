import { type Clock, ResilienceError } from '../../common';
import type { ToolArguments, ToolContext } from '../tool';

const MAX_DELAY_MS = 600_000;

/** Checks `{ ms }`: an integer of milliseconds from 0 to 600000. */
export function validateDelay(args: ToolArguments): void {
  const { ms } = args;
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > MAX_DELAY_MS) {
    throw new ResilienceError('schema', `arguments.ms must be an integer from 0 to ${MAX_DELAY_MS}`);
  }
}

/**
 * Waits `{ ms }` milliseconds of the clock and answers `{ waitedMs }`; stops at once when
 * its call is aborted. Stands in for a slow dependency in the demo and tests.
 */
export function delay(clock: Clock) {
  return (args: ToolArguments, context: ToolContext): Promise<{ waitedMs: number }> => {
    const ms = args.ms as number;
    const { signal } = context;
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clock.clearTimer(timer);
        reject(signal.reason);
      };
      const timer = clock.setTimer(() => {
        signal.removeEventListener('abort', onAbort);
        resolve({ waitedMs: ms });
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  };
}
