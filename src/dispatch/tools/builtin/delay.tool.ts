import { type Clock, ResilienceError, sleep } from '../../../common';
import type { ToolArguments, ToolContext, ToolInputSchema } from '../../tool';

const MAX_DELAY_MS = 600_000;

/** What {@link validateDelay} accepts, as a JSON Schema (a spec holds the two to the same answers). */
export const DELAY_INPUT_SCHEMA: ToolInputSchema = Object.freeze({
  type: 'object',
  properties: {
    ms: { type: 'integer', minimum: 0, maximum: MAX_DELAY_MS, description: 'How long to wait, in milliseconds.' },
  },
  required: ['ms'],
});

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
