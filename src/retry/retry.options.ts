import { z } from 'zod';
import { intIn } from '../common';

const HOUR_MS = 3_600_000;

/**
 * How many retries a dependency (a tool, an LLM target) may spend: at most `percent` of the calls of the last `windowMs`,
 * but always `minRetries` (Envoy's retry budget), so a failing dependency cannot turn into a
 * retry storm.
 */
export const retryBudgetSchema = z.strictObject({
  percent: intIn(0, 100).optional(),
  minRetries: intIn(0, 1_000_000).optional(),
  windowMs: intIn(1_000, HOUR_MS).optional(),
});

/** Retry settings; what is left out comes from the `@Tool` options, then the built-in defaults. */
export const retrySchema = z
  .strictObject({
    maxAttempts: intIn(1, 10).optional(),
    baseDelayMs: intIn(0, 60_000).optional(),
    maxDelayMs: intIn(0, 300_000).optional(),
    /** The most all attempts and waits of one call may take, from its first attempt. */
    deadlineMs: intIn(1, HOUR_MS).optional(),
    budget: retryBudgetSchema.optional(),
  })
  .refine(
    (value) =>
      value.maxDelayMs === undefined || value.baseDelayMs === undefined || value.maxDelayMs >= value.baseDelayMs,
    { error: 'must be at least baseDelayMs', path: ['maxDelayMs'] },
  );

/** What a config entry sets of a tool's retries; the rest comes from its `@Tool` options, then the built-in `DEFAULT_RETRY`. */
export type RetryOverrides = z.output<typeof retrySchema>;
