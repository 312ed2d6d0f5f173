import { z } from 'zod';

/**
 * The process overload guard's settings (the `overload` section of the config file). Defaults
 * measured on the 2-core development machine under load (docs/configuration.md, "Overload"):
 * an idle service's event-loop delay p99 stays at 10-30 ms there (10 ms of it the monitor's
 * resolution), so 100 ms is well above noise and well below what a caller notices.
 */
export const overloadSchema = z.strictObject({
  /**
   * On: the loop and the heap are measured and new calls shed past the thresholds. Off by
   * default: on a machine whose CPU is shared (a loaded CI runner, a throttled container) the
   * loop runs hundreds of milliseconds late in ordinary work, and a guard on by default would shed
   * standard calls of every app that imports the module. @default false
   */
  enabled: z.boolean().default(false),
  /** The event loop's delay (p99 over one sample window, smoothed) where shedding starts. @default 100 */
  eventLoopDelayMs: z.number().int().min(1).max(60_000).default(100),
  /** The heap in use over its limit (0-1) where shedding starts. @default 0.9 */
  heapUsedRatio: z.number().gt(0).max(1).default(0.9),
  /** How often the loop's delay and the heap are read; also the shortest Retry-After. @default 500 */
  sampleIntervalMs: z.number().int().min(10).max(60_000).default(500),
  /** The longest Retry-After an overloaded refusal gives. @default 30000 */
  maxRetryAfterMs: z.number().int().min(1).max(3_600_000).default(30_000),
});

export type OverloadSettings = z.output<typeof overloadSchema>;
/** The `overload` section as written: every field optional. */
export type OverloadOptions = z.input<typeof overloadSchema>;
