import { z } from 'zod';
import { intIn, numberIn } from '../common';

const HOUR_MS = 3_600_000;

/** Breaker settings; what is left out comes from `breakers.default`, then the built-in defaults. */
export const breakerSchema = z
  .strictObject({
    errorThresholdPercentage: intIn(1, 100).optional(),
    volumeThreshold: intIn(1, 100_000).optional(),
    resetTimeoutMs: intIn(100, HOUR_MS).optional(),
    rollingCountTimeoutMs: intIn(1_000, HOUR_MS).optional(),
    /** Attempts slower than this count as slow, even when they succeed; unset, none is. */
    slowCallDurationMs: intIn(1, 600_000).optional(),
    slowCallRatePercentage: intIn(1, 100).optional(),
    halfOpenProbes: intIn(1, 1_000).optional(),
    backoffMultiplier: numberIn(1, 100).optional(),
    /** Unset: ten times resetTimeoutMs. */
    maxResetTimeoutMs: intIn(100, 24 * HOUR_MS).optional(),
  })
  .refine(
    (value) =>
      value.maxResetTimeoutMs === undefined ||
      value.resetTimeoutMs === undefined ||
      value.maxResetTimeoutMs >= value.resetTimeoutMs,
    { error: 'must be at least resetTimeoutMs', path: ['maxResetTimeoutMs'] },
  );

/** What a config entry sets of a breaker's settings (the `breakers.<name>` entry, a tool's or a route's `breaker`). */
export type BreakerOverrides = z.output<typeof breakerSchema>;
