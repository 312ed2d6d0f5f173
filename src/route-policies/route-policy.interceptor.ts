import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
  Optional,
} from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { DEFAULT_PRIORITY, LaneRegistry, PRIORITY_HEADER, PriorityPolicy } from '../bulkhead';
import { BreakerRegistry } from '../circuit-breaker';
import { OverloadGuard } from '../overload';
import { ANONYMOUS_TENANT, CLOCK, type Clock, resolveCallId } from '../common';
import { AppPlatform, callStateOf, type PlatformRequest, RouteCache, type RouteTarget } from '../common/nest';
import { CallOutcomes } from '../events';
import { admitCall } from '../pipeline';
import { BulkheadMetadata } from './bulkhead.metadata';
import { CircuitBreakerMetadata } from './circuit-breaker.metadata';
import { RoutePolicyCall, type RoutePlan } from './route-policy-call';

/**
 * The one interceptor behind `@Bulkhead` and `@CircuitBreaker` (each Nest interceptor costs
 * about a quarter of a route's throughput, docs/pitfalls.md #12): an open circuit refuses first,
 * then the lane admits, then the handler runs under the breaker. Route metadata is read once
 * per handler and cached. Nest creates one instance per module that uses the decorators, so
 * it depends only on global providers.
 */
@Injectable()
export class RoutePolicyInterceptor implements NestInterceptor {
  /** Each route's plan, read once. */
  private readonly plans = new RouteCache<RoutePlan | null>((handler, controller) => this.plan(handler, controller));
  private readonly platform: AppPlatform;

  constructor(
    private readonly reflector: Reflector,
    // Optional: the validator refused at start every route that needs one that is missing.
    @Optional() @Inject(LaneRegistry) private readonly lanes: LaneRegistry | null,
    @Optional() @Inject(BreakerRegistry) private readonly breakers: BreakerRegistry | null,
    private readonly outcomes: CallOutcomes,
    @Inject(CLOCK) private readonly clock: Clock,
    adapterHost: HttpAdapterHost,
    // Optional as the lanes: without them there is no class to decide.
    @Optional() @Inject(PriorityPolicy) private readonly priorities: PriorityPolicy | null,
    // Absent or null when the process's overload guard is off (or its module not imported).
    @Optional() @Inject(OverloadGuard) private readonly overload: OverloadGuard | null = null,
  ) {
    this.platform = new AppPlatform(adapterHost);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const plan = this.plans.get(context);
    if (!plan) return next.handle();
    // The arguments themselves: switchToHttp() builds three closures per call onto the context.
    const request = context.getArgByIndex<PlatformRequest>(0);
    const reply = context.getArgByIndex<object>(1);
    const state = callStateOf(request, reply);
    // A method inherited from a decorated base class can carry this interceptor twice; the
    // outer one already applies the route's policies.
    if (state.underPolicy) return next.handle();
    state.underPolicy = true;
    const callId = resolveCallId(request.headers['x-call-id']);
    state.callId = callId;
    this.platform.of(reply).setHeader(reply, 'x-call-id', callId);

    const asked = request.headers[PRIORITY_HEADER];
    const priority =
      asked === undefined || !this.priorities
        ? plan.priority
        : this.priorities.classOf(plan.priority, asked, state.tenant ?? ANONYMOUS_TENANT);
    const call = new RoutePolicyCall(plan, state, next, this.outcomes, this.clock.now(), priority);
    // The call is its own lane call (tenant, abort, queue TTL) and its own work.
    const refusal = admitCall(this.overload, plan.lane, plan.breaker, state.tenant, call, call);
    if (refusal) {
      call.reportRefusal(refusal);
      throw refusal;
    }
    if (!plan.lane) call.startWithoutLane();
    return call.answer;
  }

  private plan(handler: RouteTarget, controller: RouteTarget): RoutePlan | null {
    const targets = [handler, controller];
    const route = this.reflector.getAllAndOverride(BulkheadMetadata, targets);
    const breakerName = this.reflector.getAllAndOverride(CircuitBreakerMetadata, targets);
    const lane = route ? this.lanes?.get(route.lane) : undefined;
    const breaker = breakerName ? this.breakers?.get(breakerName) : undefined;
    if (!lane && !breaker) return null;
    return {
      lane,
      laneName: lane?.name ?? '',
      queueTtlMs: route?.queueTtlMs,
      priority: route?.priorityClass ?? DEFAULT_PRIORITY,
      breaker,
      label: `${controller.name}.${handler.name}`,
    };
  }
}
