import type { FullBreakerSettings } from './breaker-settings';
import type { RollingWindow } from './rolling-window';
import type { TenantTallies } from './tenant-tallies';

/**
 * Whose a breaker's failures (or slow calls) are: one tenant's own, or the dependency's. Asked
 * as each one goes into the shared window while the circuit is closed; the tenant it names is
 * refused on its own and its outcomes leave the window, before the breaker decides to open.
 */
export interface BlameRule {
  /** A counted failure of `tenant` is in the window: the tenant to refuse alone, or undefined. */
  blameFailure(tenant: string, window: RollingWindow, tallies: TenantTallies): string | undefined;
  /** A slow attempt is in the window (slow calls counted): the tenant to refuse alone, or undefined. */
  blameSlowness(window: RollingWindow, tallies: TenantTallies): string | undefined;
}

/**
 * The rule a breaker shared by tenants follows unless given another (docs/design.md, "One
 * tenant's failures are not the dependency's").
 *
 * When a counted failure would open the breaker (or would without the failing tenant's own 4xx
 * answers, which pad nobody's failures), take the tenant with the most failures in the window.
 * If its own calls fail past the error threshold (counting its real successes only: neither its
 * 4xx answers nor its stopped calls dilute its share), and the others' calls in the window
 * (everything but that tenant's) succeed (at least one did, and at most half the error threshold
 * of them failed), the failures are that tenant's own. Otherwise the dependency is failing (the
 * failures are spread over tenants, or nobody else succeeded). A tenant alone on a dependency is
 * never blamed: its 4xx answers, successes in the shared window, are its own, not the others'.
 *
 * Slow calls likewise: when a slow call would open the breaker on the slow-call rate, the tenant
 * with the most slow calls is blamed if more than `slowCallRatePercentage` of its own calls were
 * slow while the others' were fast (at least one was, and at most half that rate of them slow).
 */
export class ThresholdBlameRule implements BlameRule {
  constructor(private readonly settings: Readonly<FullBreakerSettings>) {}

  blameFailure(tenant: string, window: RollingWindow, tallies: TenantTallies): string | undefined {
    window.moveOn();
    const { failures, successes } = window;
    if (!this.wouldOpen(failures, successes)) {
      // It might open but for this tenant's 4xx answers.
      const answered = tallies.answered(tenant);
      if (answered === 0 || !this.wouldOpen(failures, successes - answered)) return undefined;
    }
    const worst = tallies.most('failures');
    if (!worst || !this.failsPastThreshold(worst.failures, worst.successes)) return undefined;
    // Only its 4xx answers (successes in the shared window, not its own) may keep it from opening.
    const withoutItsAnswers = successes - worst.answered;
    if (!this.wouldOpen(failures, successes) && !this.wouldOpen(failures, withoutItsAnswers)) return undefined;
    const othersFailed = failures - worst.failures;
    // Everything it added to the shared window is its own, its 4xx answers counted there included.
    const othersSucceeded = successes - worst.successes - worst.answered;
    // The others' calls succeed: at most half the error threshold of them failed.
    const othersFailedPercent = (othersFailed / (othersFailed + othersSucceeded)) * 100;
    if (othersSucceeded < 1 || othersFailedPercent > this.settings.errorThresholdPercentage / 2) return undefined;
    return worst.tenant;
  }

  blameSlowness(window: RollingWindow, tallies: TenantTallies): string | undefined {
    window.moveOn();
    const { slow } = window;
    const ended = window.failures + window.successes;
    if (ended < this.settings.volumeThreshold || !this.slowPastThreshold(slow, ended)) return undefined;
    const worst = tallies.most('slow');
    if (!worst) return undefined;
    const own = worst.failures + worst.successes + worst.answered;
    if (!this.slowPastThreshold(worst.slow, own)) return undefined;
    const othersSlow = slow - worst.slow;
    const others = ended - own;
    if (others - othersSlow < 1 || (othersSlow / others) * 100 > this.settings.slowCallRatePercentage / 2) {
      return undefined;
    }
    return worst.tenant;
  }

  private slowPastThreshold(slow: number, ended: number): boolean {
    return ended > 0 && (slow / ended) * 100 > this.settings.slowCallRatePercentage;
  }

  private wouldOpen(failures: number, successes: number): boolean {
    return failures + successes >= this.settings.volumeThreshold && this.failsPastThreshold(failures, successes);
  }

  private failsPastThreshold(failures: number, successes: number): boolean {
    const total = failures + successes;
    return total > 0 && (failures / total) * 100 > this.settings.errorThresholdPercentage;
  }
}
