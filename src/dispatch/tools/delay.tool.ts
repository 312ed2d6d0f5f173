import { type Clock, ResilienceError, sleep } from '../../common';
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
  return async (args: ToolArguments, context: ToolContext): Promise<{ waitedMs: number }> => {
    const ms = args.ms as number;
    await sleep(clock, ms, context.signal);
    return { waitedMs: ms };
  };
}
