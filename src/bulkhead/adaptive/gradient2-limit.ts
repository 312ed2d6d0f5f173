import { type AdaptiveLimit, clamp, MIN_RTT_MS, usedEnough } from './adaptive-limit';
import type { Gradient2Settings } from './adaptive-settings';

export const GRADIENT2_DEFAULTS = { tolerance: 1.5, smoothing: 0.2, longWindow: 600, queueSize: 4 } as const;

/** Samples the long-run latency is a plain mean of before it becomes a moving average. */
const WARM_UP_SAMPLES = 10;
/** Recent latency under half the long-run one: a slow spell has ended, and the long-run average catches up this much faster a call. */
const CATCH_UP = 0.9;

/**
 * Netflix's Gradient2: each call's latency against the long-run average of latencies (an EWMA
 * over `longWindow` calls). While calls take no longer than `tolerance` × that average the
 * limit grows by `queueSize` a call (smoothed); as they take longer it shrinks in proportion,
 * by half at most a call (one outlier never empties a lane). A timeout's time is its timeout,
 * so timeouts shrink it as slowness does. The long-run average follows a lasting change, so a
 * dependency that stays slower is given its slots back over about `longWindow` calls: the
 * limit guards against a dependency slowing down, not against its new normal.
 */
export class Gradient2Limit implements AdaptiveLimit {
  readonly algorithm = 'gradient2';
  readonly min: number;
  readonly max: number;
  limit: number;
  private estimate: number;
  private longRttMs = 0;
  private samples = 0;
  private readonly tolerance: number;
  private readonly smoothing: number;
  private readonly longFactor: number;
  private readonly queueSize: number;

  constructor(settings: Gradient2Settings, initial: number) {
    this.min = settings.min;
    this.max = settings.max;
    this.estimate = clamp(initial, this.min, this.max);
    this.limit = Math.floor(this.estimate);
    this.tolerance = settings.tolerance ?? GRADIENT2_DEFAULTS.tolerance;
    this.smoothing = settings.smoothing ?? GRADIENT2_DEFAULTS.smoothing;
    this.longFactor = 2 / ((settings.longWindow ?? GRADIENT2_DEFAULTS.longWindow) + 1);
    this.queueSize = settings.queueSize ?? GRADIENT2_DEFAULTS.queueSize;
  }

  onSample(rttMs: number, inFlight: number): void {
    const shortRtt = Math.max(rttMs, MIN_RTT_MS);
    if (this.samples < WARM_UP_SAMPLES) {
      this.longRttMs = (this.longRttMs * this.samples + shortRtt) / (this.samples + 1);
      this.samples++;
    } else {
      this.longRttMs += (shortRtt - this.longRttMs) * this.longFactor;
    }
    if (this.longRttMs > 2 * shortRtt) this.longRttMs *= CATCH_UP;
    if (!usedEnough(inFlight, this.estimate)) return;
    const gradient = clamp((this.tolerance * this.longRttMs) / shortRtt, 0.5, 1);
    const next = this.estimate * gradient + this.queueSize;
    this.estimate = clamp(this.estimate * (1 - this.smoothing) + next * this.smoothing, this.min, this.max);
    this.limit = Math.floor(this.estimate);
  }
}
