import { type Lane, type LaneCall, laneRejectionError, type LaneWork } from '../bulkhead';
import type { Breaker } from '../circuit-breaker';
import type { ResilienceError } from '../common';
import type { OverloadGuard } from '../overload';

/**
 * The outer steps before a call's work, in their one order, for a tool call and for a route
 * under `@Bulkhead` / `@CircuitBreaker`: an overloaded process sheds first (by the call's
 * class, before a half-open breaker could hand it a probe it would then not use), then an open
 * circuit refuses (a place in the queue would only be spent on a refusal), then the lane admits
 * `work`, which runs now or waits for a slot. Returns the refusal (`overloaded`,
 * `circuit_open`, `queue_full`, ...), or undefined once admitted.
 * Without a lane, nothing is admitted: the caller runs its work itself (the overload guard and
 * the breaker are still asked: the work would still run on the saturated loop). A function,
 * not a closure: nothing is allocated for an admission or a refusal beyond the refusal's error.
 * A caller whose work is an allocation of its own (a tool call's) asks the guard and its breaker
 * before making it and passes neither here.
 *
 * @param overload the process's guard; null or undefined when it is off (or already asked).
 * @param timeoutShortened the caller chose a shorter timeout than the dependency's own: a
 *   half-open breaker keeps its probe for a call that may show the dependency healthy.
 */
export function admitCall(
  overload: OverloadGuard | null | undefined,
  lane: Lane | undefined,
  breaker: Breaker | undefined,
  /** The caller as its breaker knows it (undefined: not known), as the breaker's attempt will say it. */
  breakerTenant: string | undefined,
  work: LaneWork,
  call: LaneCall,
  timeoutShortened = false,
): ResilienceError | undefined {
  const shed = overload?.refusal(call.priority);
  if (shed) return shed;
  const refusal = breaker?.refusal(breakerTenant, timeoutShortened);
  if (refusal) return refusal;
  if (!lane) return undefined;
  const rejection = lane.admit(work, call);
  return rejection ? laneRejectionError(lane, rejection) : undefined;
}
