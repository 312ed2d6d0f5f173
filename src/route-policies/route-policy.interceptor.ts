import {
  type CallHandler,
  type ExecutionContext,
  HttpException,
  Inject,
  Injectable,
  type NestInterceptor,
  Optional,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { type Lane, LaneRegistry, laneRejectionError } from '../bulkhead';
import { type Breaker, BreakerRegistry } from '../circuit-breaker';
import { ANONYMOUS_TENANT, asResilienceError, CLOCK, type Clock, resolveCallId } from '../common';
import { type CallState, callStateOf, fromHttpException, RouteCache, type RouteTarget } from '../common/nest';
import { CallOutcomes } from '../events';
import { BulkheadMetadata } from './bulkhead.metadata';
import { CircuitBreakerMetadata } from './circuit-breaker.metadata';

interface RoutePlan {
  lane: Lane | undefined;
  queueTtlMs: number | undefined;
  breaker: Breaker | undefined;
  /** `Controller.method`: the ledger's `toolId` for a company route. */
  label: string;
}

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

  constructor(
    private readonly reflector: Reflector,
    // Optional: the validator refused at start every route that needs one that is missing.
    @Optional() @Inject(LaneRegistry) private readonly lanes: LaneRegistry | null,
    @Optional() @Inject(BreakerRegistry) private readonly breakers: BreakerRegistry | null,
    private readonly outcomes: CallOutcomes,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const plan = this.plans.get(context);
    if (!plan) return next.handle();
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const state = callStateOf(request, reply);
    // A method inherited from a decorated base class can carry this interceptor twice; the
    // outer one already applies the route's policies.
    if (state.underPolicy) return next.handle();
    state.underPolicy = true;
    const callId = resolveCallId(request.headers['x-call-id']);
    state.callId = callId;
    void reply.header('x-call-id', callId);

    const startedAt = this.clock.now();
    const progress = { started: false };
    const { lane, breaker } = plan;
    const refusal = breaker?.refusal(state.tenant);
    if (refusal) {
      this.report(plan, state, startedAt, false, refusal);
      throw refusal;
    }
    const handle = () => {
      progress.started = true;
      return lastValueFrom(next.handle(), { defaultValue: undefined });
    };
    const run = breaker ? () => breaker.fire(handle, state.tenant) : handle;
    const outcome = lane
      ? lane.run(run, { tenant: state.tenant ?? ANONYMOUS_TENANT, abort: state.abort, queueTtlMs: plan.queueTtlMs })
      : run();
    if (typeof outcome === 'string') {
      const error = laneRejectionError(lane!, outcome);
      this.report(plan, state, startedAt, false, error);
      throw error;
    }
    return from(
      outcome.then(
        (value) => {
          this.report(plan, state, startedAt, progress.started);
          return value;
        },
        (error: unknown) => {
          const failure = withAttempts(error, progress.started ? 1 : 0);
          this.report(plan, state, startedAt, progress.started, failure);
          throw failure;
        },
      ),
    );
  }

  private report(plan: RoutePlan, state: CallState, startedAt: number, started: boolean, error?: unknown) {
    this.outcomes.finish({
      callId: state.callId!,
      toolId: plan.label,
      lane: plan.lane?.name ?? '',
      tenant: state.tenant ?? ANONYMOUS_TENANT,
      pool: state.pool,
      abort: state.abort,
      startedAt,
      started,
      attempts: started ? 1 : 0,
      error,
    });
  }

  private plan(handler: RouteTarget, controller: RouteTarget): RoutePlan | null {
    const targets = [handler, controller];
    const route = this.reflector.getAllAndOverride(BulkheadMetadata, targets);
    const breakerName = this.reflector.getAllAndOverride(CircuitBreakerMetadata, targets);
    const lane = route ? this.lanes?.get(route.lane) : undefined;
    const breaker = breakerName ? this.breakers?.get(breakerName) : undefined;
    if (!lane && !breaker) return null;
    return { lane, queueTtlMs: route?.queueTtlMs, breaker, label: `${controller.name}.${handler.name}` };
  }
}

/** The failure as the client will see it, with the attempts the route made (1 once its handler ran). */
function withAttempts(error: unknown, attempts: number): unknown {
  if (error instanceof HttpException) return fromHttpException(error).withAttempts(attempts);
  return asResilienceError(error).withAttempts(attempts);
}
