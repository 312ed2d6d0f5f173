import { type Clock, type Random, ResilienceError } from '../../common';
import { hedgeTarget } from './hedge-target';
import type { LlmRoute, LlmTarget } from './llm-route';
import type { LatencyKind } from './target-load';
import { type ChoiceReason, chooseTarget, type ChoiceScope, reasonOf } from './target-strategy';

/** Why a target was passed over without an attempt. */
export type SkipReason = 'context_window';

/** What the request needs of a target's context window. */
export interface ContextNeed {
  /** The input estimate: an upper bound of the prompt's tokens. */
  readonly inputTokens: number;
  /** The output cap every attempt sends. */
  readonly outputCap: number;
}

/**
 * One request's way through its route's targets: the priority groups in order, and inside a
 * group the members the route's strategy chooses, one at a time, each on the load of the moment
 * (so a failover goes to the member least busy now, not when the request came). A target is
 * chosen once per request.
 *
 * Context windows. A target whose window cannot hold the input estimate plus the output cap is
 * passed over. The estimate is an upper bound (a token per byte of text: three or four times the
 * real count of English prose), so it only steers: when it exceeds every window of the route,
 * the targets with the largest window are still tried, and only their provider's refusal is
 * final. After a provider said the context was exceeded, only targets with a strictly larger
 * window are chosen. A target whose window is unknown (not in the table, not configured) is
 * never passed over, and none is larger than it.
 */
export class TargetWalk {
  private readonly tried: LlmTarget[] = [];
  private group = 0;
  /** Windows at or below this were refused by a provider. */
  private floor = -1;
  /** What a window must hold for its target to be chosen: the need, or the largest window if smaller. */
  private readonly need: number;
  /** The target whose provider last refused the context, for the error. */
  private refusedBy: LlmTarget | undefined;
  /** One scope for every choice of the request: its fields change, the object does not. */
  private readonly scope: ChoiceScope & { group: readonly LlmTarget[]; now: number };
  /** The reason the last target returned by {@link next} was chosen. */
  reason: ChoiceReason = 'position';

  constructor(
    private readonly route: LlmRoute,
    private readonly clock: Clock,
    private readonly random: Random,
    kind: LatencyKind,
    private readonly context: ContextNeed,
  ) {
    const needed = context.inputTokens + context.outputCap;
    this.need = Math.min(needed, route.largestContextWindow);
    this.scope = { group: route.groups[0] ?? [], now: 0, kind, eligible: (target) => this.eligible(target) };
  }

  /** The next target to try, or undefined when none is left. */
  next(): LlmTarget | undefined {
    const { route, scope } = this;
    while (this.group < route.groups.length) {
      scope.group = route.groups[this.group];
      scope.now = this.clock.now();
      const target = chooseTarget(route.strategy, scope, this.random);
      if (target) {
        this.tried.push(target);
        this.reason = reasonOf(route.strategy, target, scope);
        return target;
      }
      this.group++;
    }
    return undefined;
  }

  /** The targets of the route this request's context keeps away from (none for most requests). */
  skipped(): readonly LlmTarget[] {
    if (this.need <= this.route.smallestContextWindow) return NONE;
    return this.route.targets.filter((target) => windowOf(target) < this.need);
  }

  /** `target`'s provider said the prompt does not fit: from now on only larger windows. */
  contextRefused(target: LlmTarget): void {
    this.floor = Math.max(this.floor, windowOf(target));
    this.refusedBy = target;
  }

  /**
   * When a provider refused the request's context: `400 invalid_request` naming what the request
   * needs, what the route has and who refused; never the prompt nor the provider's text.
   */
  contextError(): ResilienceError | undefined {
    const by = this.refusedBy;
    if (!by) return undefined;
    const { inputTokens, outputCap } = this.context;
    const largest = this.route.largestContextWindow;
    return new ResilienceError(
      'invalid_request',
      `the request needs up to ${inputTokens + outputCap} tokens (input estimate ${inputTokens} + output cap ` +
        `${outputCap}); the largest context window of route '${this.route.name}' is ` +
        `${Number.isFinite(largest) ? `${largest} tokens` : 'unknown'}; ${by.label} (context window ` +
        `${by.contextWindow ?? 'unknown'}) refused it as too long, and no target left has a larger window`,
    );
  }

  /**
   * Where a hedge of an attempt at `running` goes: another member of its group, chosen by the
   * strategy among those not running and healthy enough for a hedge, else the route's usual
   * hedge target ({@link hedgeTarget}); a route of one `ordered` group hedges as it always did.
   * Never to a target the context keeps away.
   */
  hedgeTarget(running: LlmTarget, busy: readonly LlmTarget[], tenant?: string): LlmTarget | undefined {
    const { route, clock } = this;
    const fits = (target: LlmTarget) => this.fits(target);
    if (route.groups.length > 1 || route.strategy !== 'ordered') {
      const scope: ChoiceScope = {
        group: route.groups.find((group) => group.includes(running)) ?? [],
        now: clock.now(),
        kind: this.scope.kind,
        eligible: (target) =>
          target !== running &&
          !busy.includes(target) &&
          fits(target) &&
          target.health.hedgeable(clock, target.breaker, tenant),
      };
      const member = chooseTarget(route.strategy, scope, this.random);
      if (member) return member;
    }
    return hedgeTarget(clock, route, running, busy, tenant, fits);
  }

  private fits(target: LlmTarget): boolean {
    const window = windowOf(target);
    return window > this.floor && window >= this.need;
  }

  private eligible(target: LlmTarget): boolean {
    return this.fits(target) && !this.tried.includes(target);
  }
}

const NONE: readonly LlmTarget[] = [];

/** A target's window; an unknown one is taken as unbounded. */
function windowOf(target: LlmTarget): number {
  return target.contextWindow ?? Infinity;
}
