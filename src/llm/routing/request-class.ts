import type { PriorityClass, PriorityPolicy } from '../../bulkhead';
import type { RouteCall } from '../route-call';
import type { LlmRoute } from './llm-route';

/**
 * An LLM request's class in its route's lane: what its caller asked for (`X-Bulkhead-Priority`),
 * held to its tenant's ceiling, or the route's own `priorityClass`.
 */
export function classOf(
  priorities: PriorityPolicy | null,
  route: Pick<LlmRoute, 'priorityClass'>,
  call: Pick<RouteCall, 'askedPriority' | 'tenant'>,
): PriorityClass {
  return priorities ? priorities.classOf(route.priorityClass, call.askedPriority, call.tenant) : route.priorityClass;
}
