/** How a breaker decides to open; every duration in milliseconds. */
export interface BreakerSettings {
  /** Opens when more than this share of the window's attempts failed. @default 50 */
  errorThresholdPercentage: number;
  /** Attempts the window must hold before the share counts. @default 10 */
  volumeThreshold: number;
  /** How long it stays open before one probe may go through (half open). @default 30000 */
  resetTimeoutMs: number;
  /** The rolling window the share is computed over. @default 10000 */
  rollingCountTimeoutMs: number;
}

/**
 * The defaults: half of at least 10 attempts in 10 s failing opens the circuit for 30 s.
 * Ten attempts keep one unlucky call from opening it; 30 s is how long a restarting
 * dependency commonly needs (opossum, resilience4j and Polly choose alike).
 */
export const DEFAULT_BREAKER_SETTINGS: Readonly<BreakerSettings> = Object.freeze({
  errorThresholdPercentage: 50,
  volumeThreshold: 10,
  resetTimeoutMs: 30_000,
  rollingCountTimeoutMs: 10_000,
});

/** The settings with what `overrides` sets, in order; undefined fields are skipped. */
export function breakerSettings(...overrides: Array<Partial<BreakerSettings> | undefined>): BreakerSettings {
  const settings = { ...DEFAULT_BREAKER_SETTINGS };
  for (const override of overrides) {
    if (!override) continue;
    for (const [key, value] of Object.entries(override) as Array<[keyof BreakerSettings, number | undefined]>) {
      if (value !== undefined) settings[key] = value;
    }
  }
  return settings;
}

/**
 * Throws a RangeError naming the breaker for settings it cannot run with; `buckets` is how many
 * buckets its rolling window has (the window must be at least 1 ms a bucket).
 */
export function checkBreakerSettings(name: string, settings: BreakerSettings, buckets: number): void {
  const { errorThresholdPercentage, volumeThreshold, resetTimeoutMs, rollingCountTimeoutMs } = settings;
  if (!(errorThresholdPercentage >= 1 && errorThresholdPercentage <= 100)) {
    throw new RangeError(`breaker '${name}': errorThresholdPercentage must be from 1 to 100`);
  }
  if (!(Number.isSafeInteger(volumeThreshold) && volumeThreshold >= 1)) {
    throw new RangeError(`breaker '${name}': volumeThreshold must be an integer of at least 1`);
  }
  if (!(resetTimeoutMs > 0 && Number.isFinite(resetTimeoutMs))) {
    throw new RangeError(`breaker '${name}': resetTimeoutMs must be a positive number`);
  }
  if (!(rollingCountTimeoutMs >= buckets && Number.isFinite(rollingCountTimeoutMs))) {
    throw new RangeError(`breaker '${name}': rollingCountTimeoutMs must be at least ${buckets}`);
  }
}
