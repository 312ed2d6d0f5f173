/** How an adaptive lane moves its limit: the three families of Netflix's concurrency-limits. */
export type LimitAlgorithm = 'gradient2' | 'vegas' | 'aimd';

interface LimitBounds {
  /** The limit never falls below this, an integer of at least 1. */
  min: number;
  /** The limit never rises above this, an integer of at least `min`. */
  max: number;
}

/**
 * Latency against its own long-run average: the limit falls as calls take longer than they
 * used to, and grows while they do not. The default: it needs no knowledge of the dependency.
 */
export interface Gradient2Settings extends LimitBounds {
  algorithm: 'gradient2';
  /** How far the recent latency may exceed the long-run one before the limit falls. @default 1.5 */
  tolerance?: number;
  /** Share of each new estimate taken into the limit, 0 < s ≤ 1. @default 0.2 */
  smoothing?: number;
  /** Calls the long-run latency averages over. @default 600 */
  longWindow?: number;
  /** Calls that may wait at the dependency beyond what its latency says it serves. @default 4 */
  queueSize?: number;
}

/** Latency against the fastest seen (TCP Vegas): the limit follows the queue it estimates. */
export interface VegasSettings extends LimitBounds {
  algorithm: 'vegas';
  /** Share of each new estimate taken into the limit, 0 < s ≤ 1. @default 1 */
  smoothing?: number;
  /** The fastest latency is measured afresh about every `probeMultiplier × limit` calls. @default 30 */
  probeMultiplier?: number;
}

/** Loss only: +1 while calls end in time, × `backoffRatio` on a timeout (or a call slower than the threshold). */
export interface AimdSettings extends LimitBounds {
  algorithm: 'aimd';
  /** What a timeout leaves of the limit, 0.5 ≤ r < 1. @default 0.9 */
  backoffRatio?: number;
  /** A call that held its slot longer than this counts as a timeout. @default none */
  latencyThresholdMs?: number;
}

export type AdaptiveLimitSettings = Gradient2Settings | VegasSettings | AimdSettings;
