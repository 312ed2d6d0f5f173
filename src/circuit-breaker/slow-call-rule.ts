import type { FullBreakerSettings } from './breaker-settings';
import type { RollingWindow } from './rolling-window';

/**
 * When an attempt is slow, and when slowness opens the circuit: the breaker measures an attempt
 * only when it has such a rule (measuring costs a promise reaction and two closures a call).
 */
export interface SlowCallRule {
  /** Whether an attempt that took `durationMs` (on the injected clock, fire to end) is slow. */
  isSlow(durationMs: number): boolean;
  /** Whether the window's slow attempts open the closed circuit; asked after each slow one was counted. */
  trips(window: RollingWindow): boolean;
}

/**
 * resilience4j's rule: slower than `slowCallDurationMs`, and open once the window holds
 * `volumeThreshold` attempts, more than `slowCallRatePercentage` of them slow. None without
 * `slowCallDurationMs`: no call is ever slow.
 */
export function slowCallRule(settings: Readonly<FullBreakerSettings>): SlowCallRule | undefined {
  const durationMs = settings.slowCallDurationMs;
  if (durationMs === undefined) return undefined;
  const { volumeThreshold, slowCallRatePercentage } = settings;
  return {
    isSlow: (tookMs) => tookMs > durationMs,
    trips(window) {
      const ended = window.failures + window.successes;
      return ended >= volumeThreshold && (window.slow / ended) * 100 > slowCallRatePercentage;
    },
  };
}
