import { type BlameRule, ThresholdBlameRule } from './blame-rule';
import type { FullBreakerSettings } from './breaker-settings';
import { type SlowCallRule, slowCallRule } from './slow-call-rule';

/**
 * The rules a breaker follows where its settings do not say it all, each pluggable (as Polly's
 * circuit behaviour and cockatiel's breakers are): give one to replace the rule its settings
 * make.
 */
export interface BreakerRules {
  /**
   * When an attempt is slow and slowness opens it; `undefined` given: no call is slow.
   * @default resilience4j's rule, with `slowCallDurationMs` set (slow-call-rule.ts)
   */
  slowCalls?: SlowCallRule;
  /** Whose failures (and slow calls) are a tenant's own. @default {@link ThresholdBlameRule} */
  blame?: BlameRule;
}

/** `given` rules, and for those left out, the rules `settings` make. */
export function breakerRules(
  settings: Readonly<FullBreakerSettings>,
  given: Readonly<BreakerRules>,
): { slowCalls: SlowCallRule | undefined; blame: BlameRule } {
  return {
    slowCalls: 'slowCalls' in given ? given.slowCalls : slowCallRule(settings),
    blame: given.blame ?? new ThresholdBlameRule(settings),
  };
}
