import { z } from 'zod';
import { intIn, name, numberIn, type OptionsOf } from '../common';

const HOUR_MS = 3_600_000;

/** How long a call may wait for a lane's slot when its lane does not say. */
export const DEFAULT_QUEUE_TTL_MS = 30_000;

/** Bounds every adaptive algorithm takes. */
const limitBounds = { min: intIn(1, 4096), max: intIn(1, 4096) };

/** A lane limit that follows the dependency (docs/design.md, "Adaptive lanes"). */
const adaptiveLimit = z.discriminatedUnion(
  'algorithm',
  [
    z.strictObject({
      algorithm: z.literal('gradient2'),
      ...limitBounds,
      tolerance: numberIn(1, 10).optional(),
      smoothing: numberIn(0.01, 1).optional(),
      longWindow: intIn(10, 100_000).optional(),
      queueSize: intIn(0, 4096).optional(),
    }),
    z.strictObject({
      algorithm: z.literal('vegas'),
      ...limitBounds,
      smoothing: numberIn(0.01, 1).optional(),
      probeMultiplier: intIn(1, 10_000).optional(),
    }),
    z.strictObject({
      algorithm: z.literal('aimd'),
      ...limitBounds,
      backoffRatio: numberIn(0.5, 0.99).optional(),
      latencyThresholdMs: intIn(1, HOUR_MS).optional(),
    }),
  ],
  { error: 'must be one of gradient2, vegas, aimd' },
);

/** One lane: the `lanes.<name>` entry of the config file. */
export const laneSchema = z
  .strictObject({
    /** Calls running at once, 1..4096; an adaptive lane's starting limit. */
    concurrency: intIn(1, 4096),
    /** Calls waiting for a slot, 0..100000; 0 = start now or refuse. */
    queueCapacity: intIn(0, 100_000),
    /** Longest wait for a slot. */
    queueTtlMs: intIn(1, HOUR_MS).default(DEFAULT_QUEUE_TTL_MS),
    /** One tenant's share of the queue. @default queueCapacity */
    maxQueuedPerTenant: intIn(1, 100_000).optional(),
    /** A limit that follows the dependency's latency, within `min` and `max`; fixed at `concurrency` otherwise. */
    adaptive: adaptiveLimit.optional(),
  })
  .refine((value) => value.maxQueuedPerTenant === undefined || value.maxQueuedPerTenant <= value.queueCapacity, {
    error: 'must not exceed queueCapacity',
    path: ['maxQueuedPerTenant'],
  })
  .refine((value) => !value.adaptive || value.adaptive.min <= value.adaptive.max, {
    error: 'must be at least adaptive.min',
    path: ['adaptive', 'max'],
  })
  .refine(
    (value) => !value.adaptive || (value.concurrency >= value.adaptive.min && value.concurrency <= value.adaptive.max),
    {
      error: 'an adaptive lane starts at concurrency: it must be from adaptive.min to adaptive.max',
      path: ['concurrency'],
    },
  );

/** The `lanes` section: at least one lane, by name. */
export const lanesSchema = z.record(name(), laneSchema).refine((lanes) => Object.keys(lanes).length > 0, {
  error: 'must define at least one lane',
});

/** One lane's settings, as `LanesModule.forRoot` and the config file's `lanes.<name>` take them. */
export type LaneSettings = OptionsOf<typeof laneSchema>;
