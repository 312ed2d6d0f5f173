import { type AdaptiveLimit, clamp, usedEnough } from './adaptive-limit';
import type { AimdSettings } from './adaptive-settings';

export const AIMD_DEFAULTS = { backoffRatio: 0.9 } as const;

/**
 * Additive increase, multiplicative decrease, as TCP Reno: one more slot for each call that
 * ended in time while the lane was well used, `backoffRatio` of the limit (at least one less)
 * for each timeout. It sees overload only once calls time out, so it suits dependencies whose
 * latency says little (queues of mixed sizes), where a latency-based algorithm would chase noise.
 */
export class AimdLimit implements AdaptiveLimit {
  readonly algorithm = 'aimd';
  readonly min: number;
  readonly max: number;
  limit: number;
  private readonly backoffRatio: number;
  private readonly thresholdMs: number;

  constructor(settings: AimdSettings, initial: number) {
    this.min = settings.min;
    this.max = settings.max;
    this.limit = clamp(initial, this.min, this.max);
    this.backoffRatio = settings.backoffRatio ?? AIMD_DEFAULTS.backoffRatio;
    this.thresholdMs = settings.latencyThresholdMs ?? Infinity;
  }

  onSample(rttMs: number, inFlight: number, dropped: boolean): void {
    if (dropped || rttMs > this.thresholdMs) {
      const backedOff = Math.min(this.limit - 1, Math.floor(this.limit * this.backoffRatio));
      this.limit = clamp(backedOff, this.min, this.max);
    } else if (usedEnough(inFlight, this.limit)) {
      this.limit = clamp(this.limit + 1, this.min, this.max);
    }
  }
}
