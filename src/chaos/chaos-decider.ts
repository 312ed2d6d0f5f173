import type { Random } from '../common';

/**
 * What chaos does to the attempts of one tool or LLM target (`chaos` in its config). Rates are
 * shares of attempts, from 0 to 1; what is left out is 0.
 */
export interface ChaosSettings<K extends string> {
  /** The share of attempts that fail with `faultKind` instead of running. @default 0 */
  readonly faultRate?: number;
  readonly faultKind?: K;
  /** The share of attempts delayed by `latencyMs` before they run (or fail). @default 0 */
  readonly latencyRate?: number;
  /** Milliseconds of the clock a delayed attempt waits. */
  readonly latencyMs?: number;
}

/** What one attempt gets. */
export interface ChaosDecision<K extends string> {
  /** How long it waits before it runs; 0 when it is not delayed. */
  readonly latencyMs: number;
  /** The fault it fails with instead of running; undefined when it runs. */
  readonly fault: K | undefined;
}

const NOTHING: ChaosDecision<never> = Object.freeze({ latencyMs: 0, fault: undefined });

/**
 * Draws, for each attempt, whether it is delayed and whether it fails, from the injected random
 * source (Polly's chaos strategies, Envoy's fault filter: a share of requests each). The two
 * draws are independent: an attempt may be delayed and then fail. A rate of 0 or 1 draws
 * nothing, so a configuration that always (or never) injects leaves the random sequence of
 * retry jitter untouched.
 */
export class ChaosDecider<K extends string> {
  private readonly faultRate: number;
  private readonly faultKind: K | undefined;
  private readonly latencyRate: number;
  private readonly latencyMs: number;

  constructor(
    settings: ChaosSettings<K>,
    private readonly random: Random,
  ) {
    this.faultRate = rate('faultRate', settings.faultRate);
    this.latencyRate = rate('latencyRate', settings.latencyRate);
    this.faultKind = settings.faultKind;
    this.latencyMs = settings.latencyMs ?? 0;
    if (!Number.isSafeInteger(this.latencyMs) || this.latencyMs < 0) {
      throw new RangeError('latencyMs must be an integer of at least 0');
    }
    if (this.faultRate > 0 && this.faultKind === undefined) {
      throw new RangeError('faultKind is required when faultRate is above 0');
    }
    if (this.latencyRate > 0 && this.latencyMs === 0) {
      throw new RangeError('latencyMs must be above 0 when latencyRate is above 0');
    }
  }

  /** Whether any attempt can be touched at all: a rate above 0. */
  get active(): boolean {
    return this.faultRate > 0 || this.latencyRate > 0;
  }

  /** Draws one attempt's chaos: its latency first, then its fault. */
  decide(): ChaosDecision<K> {
    const latencyMs = this.draw(this.latencyRate) ? this.latencyMs : 0;
    const fault = this.draw(this.faultRate) ? this.faultKind : undefined;
    if (latencyMs === 0 && fault === undefined) return NOTHING;
    return { latencyMs, fault };
  }

  private draw(share: number): boolean {
    if (share <= 0) return false;
    if (share >= 1) return true;
    return this.random() < share;
  }
}

function rate(name: string, value: number | undefined): number {
  if (value === undefined) return 0;
  if (!(value >= 0 && value <= 1)) throw new RangeError(`${name} must be a number from 0 to 1`);
  return value;
}
