import { type CallHandler, type ExecutionContext, Inject, Injectable, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { ANONYMOUS_TENANT, CLOCK, type Clock } from '../common';
import { type CallState, callStateOf } from '../common/nest';
import { CallOutcomes } from '../events';
import { BulkheadMetadata } from './bulkhead.metadata';
import { resolveCallId } from './call-id';
import type { Lane } from './lane';
import { LaneRegistry } from './lane-registry.service';
import { laneRejectionError } from './lane-rejection';

interface RoutePlan {
  lane: Lane;
  queueTtlMs: number | undefined;
  /** `Controller.method`: the ledger's `toolId` for a company route. */
  label: string;
}

/**
 * Runs `@Bulkhead` routes in their lane. Route metadata is read once per handler and cached,
 * as this sits on the hot path of every decorated request. Nest creates one instance per
 * module that uses the decorator, so it depends only on global providers.
 */
@Injectable()
export class BulkheadInterceptor implements NestInterceptor {
  /** Plans by controller, then handler: controllers that inherit one method may use different lanes. */
  private readonly plans = new WeakMap<object, WeakMap<object, RoutePlan | null>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly lanes: LaneRegistry,
    private readonly outcomes: CallOutcomes,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const plan = this.planFor(context);
    if (!plan) return next.handle();
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const state = callStateOf(request, reply);
    // A method inherited from a decorated base class can carry this interceptor twice; the
    // outer one has already taken the slot for the whole route.
    if (state.inLane) return next.handle();
    state.inLane = true;
    const callId = resolveCallId(request.headers['x-call-id']);
    state.callId = callId;
    void reply.header('x-call-id', callId);

    const startedAt = this.clock.now();
    let started = false;
    const outcome = plan.lane.run(
      () => {
        started = true;
        return lastValueFrom(next.handle(), { defaultValue: undefined });
      },
      { tenant: ANONYMOUS_TENANT, abort: state.abort, queueTtlMs: plan.queueTtlMs },
    );
    if (typeof outcome === 'string') {
      const error = laneRejectionError(plan.lane, outcome);
      this.report(plan, state, startedAt, { error, started });
      throw error;
    }
    return from(
      outcome.then(
        (value) => {
          this.report(plan, state, startedAt, { started });
          return value;
        },
        (error: unknown) => {
          this.report(plan, state, startedAt, { error, started });
          throw error;
        },
      ),
    );
  }

  private report(plan: RoutePlan, state: CallState, startedAt: number, ending: { error?: unknown; started: boolean }) {
    this.outcomes.finish({
      ...ending,
      callId: state.callId!,
      toolId: plan.label,
      lane: plan.lane.name,
      tenant: ANONYMOUS_TENANT,
      abort: state.abort,
      startedAt,
    });
  }

  private planFor(context: ExecutionContext): RoutePlan | null {
    const handler = context.getHandler();
    const controller = context.getClass();
    let byHandler = this.plans.get(controller);
    if (!byHandler) {
      byHandler = new WeakMap();
      this.plans.set(controller, byHandler);
    }
    let plan = byHandler.get(handler);
    if (plan === undefined) {
      const route = this.reflector.getAllAndOverride(BulkheadMetadata, [handler, controller]);
      const lane = route ? this.lanes.get(route.lane) : undefined;
      plan = route && lane ? { lane, queueTtlMs: route.queueTtlMs, label: `${controller.name}.${handler.name}` } : null;
      byHandler.set(handler, plan);
    }
    return plan;
  }
}
