import type { Clock } from '../../common';
import type { LlmRoute, LlmTarget } from './llm-route';

/**
 * Where a hedge of an attempt at `running` goes: the next target after it in the route's order
 * that may take one, else `running` itself (a second request to the same target, which a
 * different backend behind it may answer sooner: the tail-at-scale hedge) when it is the only
 * attempt running; never one already running (`busy`: the targets of the attempts in flight),
 * nor one `allowed` refuses (the request's context does not fit it).
 */
export function hedgeTarget(
  clock: Clock,
  route: LlmRoute,
  running: LlmTarget,
  busy: readonly LlmTarget[],
  tenant?: string,
  allowed?: (target: LlmTarget) => boolean,
): LlmTarget | undefined {
  const after = route.targets.slice(route.targets.indexOf(running) + 1);
  for (const candidate of [...after, running]) {
    if (candidate === running ? busy.length > 1 : busy.includes(candidate)) continue;
    if (allowed && !allowed(candidate)) continue;
    if (candidate.health.hedgeable(clock, candidate.breaker, tenant)) return candidate;
  }
  return undefined;
}
