import type { Random } from '../../common';
import type { LlmRouteConfig } from '../llm.options';
import type { LlmTarget } from './llm-route';
import type { LatencyKind } from './target-load';

/**
 * How a route chooses among the targets of one priority group:
 * - `ordered`: by their place in the config (the first that may take the request);
 * - `weighted`: at random, in proportion to each target's `weight`;
 * - `least-busy`: the one with the fewest attempts in flight;
 * - `lowest-latency`: the one with the lowest recent average latency (time to first content for
 *   a stream, the whole answer otherwise); one with no recent sample first, so it gets one, but
 *   one probe at a time: while an attempt at an unmeasured target is in flight, the others take
 *   the requests, so a slow target unmeasured (at start, or once its sample is stale) is not
 *   stampeded before its first answer says it is slow.
 */
export type TargetStrategy = LlmRouteConfig['strategy'];

/** Whether `strategy` chooses by the targets' load (in-flight counts, latency), which is then kept. */
export function readsLoad(strategy: TargetStrategy): boolean {
  return strategy === 'least-busy' || strategy === 'lowest-latency';
}

/** Why a target was chosen, as the metrics and the log say it; `hedge` for a hedge's target. */
export type ChoiceReason = 'position' | 'weight' | 'least_busy' | 'lowest_latency' | 'no_latency_sample' | 'hedge';

/** What a choice is made among: the members of a group that `eligible` lets through. */
export interface ChoiceScope {
  readonly group: readonly LlmTarget[];
  eligible(target: LlmTarget): boolean;
  readonly kind: LatencyKind;
  readonly now: number;
}

/**
 * The member of `scope.group` that `strategy` chooses, or undefined when none is eligible. One
 * pass over the group, no allocation. Equal scores are broken with `random` (each of k equal
 * targets wins with probability 1/k), never by position: the first listed must not take every
 * tie, which would pile the load of an idle route onto it.
 */
export function chooseTarget(strategy: TargetStrategy, scope: ChoiceScope, random: Random): LlmTarget | undefined {
  if (strategy === 'ordered') return firstEligible(scope);
  if (strategy === 'weighted') return byWeight(scope, random);
  let chosen: LlmTarget | undefined;
  let best = Infinity;
  let ties = 0;
  for (const target of scope.group) {
    if (!scope.eligible(target)) continue;
    const score = scoreOf(strategy, target, scope);
    if (score < best) {
      best = score;
      chosen = target;
      ties = 1;
    } else if (score === best) {
      // Reservoir sampling of one among the ties seen so far: each ends up equally likely.
      ties++;
      if (random() * ties < 1) chosen = target;
    }
  }
  return chosen;
}

/** Why `strategy` chose `target` (read right after the choice, on the same clock reading). */
export function reasonOf(strategy: TargetStrategy, target: LlmTarget, scope: ChoiceScope): ChoiceReason {
  switch (strategy) {
    case 'ordered':
      return 'position';
    case 'weighted':
      return 'weight';
    case 'least-busy':
      return 'least_busy';
    case 'lowest-latency':
      return target.load.latencyMs(scope.kind, scope.now) === undefined ? 'no_latency_sample' : 'lowest_latency';
  }
}

function scoreOf(strategy: 'least-busy' | 'lowest-latency', target: LlmTarget, scope: ChoiceScope): number {
  if (strategy === 'least-busy') return target.load.inFlight;
  const latency = target.load.latencyMs(scope.kind, scope.now);
  if (latency !== undefined) return latency;
  // No recent sample: the best score, so the target is tried and measured; while that probe is in
  // flight the worst, so the requests meanwhile stay on what is measured.
  return target.load.inFlight === 0 ? -Infinity : Infinity;
}

function firstEligible(scope: ChoiceScope): LlmTarget | undefined {
  for (const target of scope.group) if (scope.eligible(target)) return target;
  return undefined;
}

function byWeight(scope: ChoiceScope, random: Random): LlmTarget | undefined {
  let total = 0;
  for (const target of scope.group) if (scope.eligible(target)) total += target.weight;
  if (total <= 0) return undefined;
  let point = random() * total;
  let last: LlmTarget | undefined;
  for (const target of scope.group) {
    if (!scope.eligible(target)) continue;
    last = target;
    point -= target.weight;
    if (point < 0) return target;
  }
  // Rounding may leave a sliver past the last weight: it belongs to the last eligible target.
  return last;
}
