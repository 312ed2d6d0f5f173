/** How a breaker decides to open, how long it stays open, and how it probes; durations in milliseconds. */
export interface BreakerSettings {
  /** Opens when more than this share of the window's attempts failed. @default 50 */
  errorThresholdPercentage: number;
  /** Attempts the window must hold before the share counts. @default 10 */
  volumeThreshold: number;
  /** How long it stays open the first time before probing (half open). @default 30000 */
  resetTimeoutMs: number;
  /** The rolling window the share is computed over. @default 10000 */
  rollingCountTimeoutMs: number;
  /**
   * An attempt that takes longer than this (on the injected clock, from its start to its end) is
   * slow, whether it succeeded or failed. Unset: no call is ever slow, and
   * `slowCallRatePercentage` does nothing. @default undefined
   */
  slowCallDurationMs?: number;
  /** Opens when more than this share of the window's attempts were slow. @default 50 */
  slowCallRatePercentage?: number;
  /** Probes let through while half open: all must succeed to close, the first failure opens again. @default 1 */
  halfOpenProbes?: number;
  /** Each failed probe multiplies the open time by this; 1 keeps it at `resetTimeoutMs`. @default 1 */
  backoffMultiplier?: number;
  /**
   * The longest the open time grows to. Unset: {@link DEFAULT_MAX_RESET_FACTOR} × `resetTimeoutMs`.
   * @default undefined
   */
  maxResetTimeoutMs?: number;
}

/**
 * Settings with every default filled in. The settings added after the first four are optional in
 * {@link BreakerSettings}, so that settings written for the first four still do.
 */
export type FullBreakerSettings = BreakerSettings &
  Required<Pick<BreakerSettings, 'slowCallRatePercentage' | 'halfOpenProbes' | 'backoffMultiplier'>>;

/** Without `maxResetTimeoutMs`, the open time grows to at most this many times `resetTimeoutMs`. */
export const DEFAULT_MAX_RESET_FACTOR = 10;

/**
 * The defaults: half of at least 10 attempts in 10 s failing opens the circuit for 30 s, then one
 * probe decides. Ten attempts keep one unlucky call from opening it; 30 s is how long a
 * restarting dependency commonly needs (opossum, resilience4j and Polly choose alike). No call is
 * slow and the open time never grows: both are opt-in.
 */
export const DEFAULT_BREAKER_SETTINGS: Readonly<FullBreakerSettings> = Object.freeze({
  errorThresholdPercentage: 50,
  volumeThreshold: 10,
  resetTimeoutMs: 30_000,
  rollingCountTimeoutMs: 10_000,
  slowCallRatePercentage: 50,
  halfOpenProbes: 1,
  backoffMultiplier: 1,
});

/** The settings with what `overrides` sets, in order; undefined fields are skipped. */
export function breakerSettings(...overrides: Array<Partial<BreakerSettings> | undefined>): FullBreakerSettings {
  const settings: FullBreakerSettings = { ...DEFAULT_BREAKER_SETTINGS };
  for (const override of overrides) {
    if (!override) continue;
    for (const [key, value] of Object.entries(override) as Array<[keyof BreakerSettings, number | undefined]>) {
      if (value !== undefined) settings[key] = value;
    }
  }
  return settings;
}

/** The longest the breaker stays open after failed probes (see {@link BreakerSettings.maxResetTimeoutMs}). */
export function maxResetTimeoutMs(settings: Readonly<BreakerSettings>): number {
  return settings.maxResetTimeoutMs ?? settings.resetTimeoutMs * DEFAULT_MAX_RESET_FACTOR;
}

/**
 * Throws a RangeError naming the breaker for settings it cannot run with; `buckets` is how many
 * buckets its rolling window has (the window must be at least 1 ms a bucket).
 */
export function checkBreakerSettings(name: string, settings: FullBreakerSettings, buckets: number): void {
  const { errorThresholdPercentage, volumeThreshold, resetTimeoutMs, rollingCountTimeoutMs } = settings;
  const problem = (what: string) => new RangeError(`breaker '${name}': ${what}`);
  if (!(errorThresholdPercentage >= 1 && errorThresholdPercentage <= 100)) {
    throw problem('errorThresholdPercentage must be from 1 to 100');
  }
  if (!(Number.isSafeInteger(volumeThreshold) && volumeThreshold >= 1)) {
    throw problem('volumeThreshold must be an integer of at least 1');
  }
  if (!(resetTimeoutMs > 0 && Number.isFinite(resetTimeoutMs))) {
    throw problem('resetTimeoutMs must be a positive number');
  }
  if (!(rollingCountTimeoutMs >= buckets && Number.isFinite(rollingCountTimeoutMs))) {
    throw problem(`rollingCountTimeoutMs must be at least ${buckets}`);
  }
  const { slowCallDurationMs, slowCallRatePercentage, halfOpenProbes, backoffMultiplier } = settings;
  if (slowCallDurationMs !== undefined && !(slowCallDurationMs > 0 && Number.isFinite(slowCallDurationMs))) {
    throw problem('slowCallDurationMs must be a positive number');
  }
  if (!(slowCallRatePercentage >= 1 && slowCallRatePercentage <= 100)) {
    throw problem('slowCallRatePercentage must be from 1 to 100');
  }
  if (!(Number.isSafeInteger(halfOpenProbes) && halfOpenProbes >= 1)) {
    throw problem('halfOpenProbes must be an integer of at least 1');
  }
  if (!(backoffMultiplier >= 1 && Number.isFinite(backoffMultiplier))) {
    throw problem('backoffMultiplier must be a number of at least 1');
  }
  const maxMs = maxResetTimeoutMs(settings);
  if (!(maxMs >= resetTimeoutMs && Number.isFinite(maxMs))) {
    throw problem(`maxResetTimeoutMs must be at least resetTimeoutMs (${resetTimeoutMs})`);
  }
}
