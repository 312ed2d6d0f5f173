import type { Random } from '../../common';
import { type AdaptiveLimit, clamp, MIN_RTT_MS, usedEnough } from './adaptive-limit';
import type { VegasSettings } from './adaptive-settings';

export const VEGAS_DEFAULTS = { smoothing: 1, probeMultiplier: 30 } as const;

/** log10 of the limit, at least 1: Vegas's thresholds and steps grow slowly with the limit. */
function log10Of(limit: number): number {
  return Math.max(1, Math.floor(Math.log10(limit)));
}

/**
 * TCP Vegas as Netflix's concurrency-limits has it: the fastest latency seen is the
 * dependency's own time, and `limit × (1 − fastest / latency)` the calls queued there. Little
 * or no queue: the limit grows (by log10 of itself, or faster with none at all); a queue past
 * 6·log10: it shrinks by log10; a timeout shrinks it too. The fastest latency is measured afresh
 * (the next call's time taken as it) every `probeMultiplier × limit` calls or so, jittered so
 * replicas do not probe at once, so a dependency that became lastingly slower is not read as a
 * queue for ever.
 */
export class VegasLimit implements AdaptiveLimit {
  readonly algorithm = 'vegas';
  readonly min: number;
  readonly max: number;
  limit: number;
  private estimate: number;
  private fastestMs = 0;
  private sinceProbe = 0;
  private probeJitter: number;
  private readonly smoothing: number;
  private readonly probeMultiplier: number;

  constructor(
    settings: VegasSettings,
    initial: number,
    private readonly random: Random,
  ) {
    this.min = settings.min;
    this.max = settings.max;
    this.estimate = clamp(initial, this.min, this.max);
    this.limit = Math.floor(this.estimate);
    this.smoothing = settings.smoothing ?? VEGAS_DEFAULTS.smoothing;
    this.probeMultiplier = settings.probeMultiplier ?? VEGAS_DEFAULTS.probeMultiplier;
    this.probeJitter = this.jitter();
  }

  onSample(rttMs: number, inFlight: number, dropped: boolean): void {
    const rtt = Math.max(rttMs, MIN_RTT_MS);
    this.sinceProbe++;
    if (this.probeJitter * this.probeMultiplier * this.estimate <= this.sinceProbe) {
      this.probeJitter = this.jitter();
      this.sinceProbe = 0;
      this.fastestMs = rtt;
      return;
    }
    if (this.fastestMs === 0 || rtt < this.fastestMs) {
      this.fastestMs = rtt;
      return;
    }
    const log = log10Of(this.estimate);
    let next: number;
    if (dropped) {
      next = this.estimate - log;
    } else if (!usedEnough(inFlight, this.estimate)) {
      return;
    } else {
      const queued = Math.ceil(this.estimate * (1 - this.fastestMs / rtt));
      if (queued <= log) next = this.estimate + 6 * log;
      else if (queued < 3 * log) next = this.estimate + log;
      else if (queued > 6 * log) next = this.estimate - log;
      else return;
    }
    next = clamp(next, this.min, this.max);
    this.estimate = (1 - this.smoothing) * this.estimate + this.smoothing * next;
    this.limit = Math.floor(this.estimate);
  }

  private jitter(): number {
    return 0.5 + this.random() * 0.5;
  }
}
