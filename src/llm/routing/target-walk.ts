import type { Clock, Random } from '../../common';
import { hedgeTarget } from './hedge-target';
import type { LlmRoute, LlmTarget } from './llm-route';
import type { LatencyKind } from './target-load';
import { type ChoiceReason, chooseTarget, type ChoiceScope, reasonOf } from './target-strategy';

/**
 * One request's way through its route's targets: the priority groups in order, and inside a
 * group the members the route's strategy chooses, one at a time, each on the load of the moment
 * (so a failover goes to the member least busy now, not when the request came). A target is
 * chosen once per request.
 */
export class TargetWalk {
  private readonly tried: LlmTarget[] = [];
  private group = 0;
  /** One scope for every choice of the request: its fields change, the object does not. */
  private readonly scope: ChoiceScope & { group: readonly LlmTarget[]; now: number };
  /** The reason the last target returned by {@link next} was chosen. */
  reason: ChoiceReason = 'position';

  constructor(
    private readonly route: LlmRoute,
    private readonly clock: Clock,
    private readonly random: Random,
    kind: LatencyKind,
  ) {
    this.scope = { group: route.groups[0] ?? [], now: 0, kind, eligible: (target) => !this.tried.includes(target) };
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

  /**
   * Where a hedge of an attempt at `running` goes: another member of its group, chosen by the
   * strategy among those not running and healthy enough for a hedge, else the route's usual
   * hedge target ({@link hedgeTarget}). A route of one `ordered` group hedges as it always did.
   */
  hedgeTarget(running: LlmTarget, busy: readonly LlmTarget[], tenant?: string): LlmTarget | undefined {
    const { route, clock } = this;
    if (route.groups.length > 1 || route.strategy !== 'ordered') {
      const scope: ChoiceScope = {
        group: route.groups.find((group) => group.includes(running)) ?? [],
        now: clock.now(),
        kind: this.scope.kind,
        eligible: (target) =>
          target !== running && !busy.includes(target) && target.health.hedgeable(clock, target.breaker, tenant),
      };
      const member = chooseTarget(route.strategy, scope, this.random);
      if (member) return member;
    }
    return hedgeTarget(clock, route, running, busy, tenant);
  }
}
