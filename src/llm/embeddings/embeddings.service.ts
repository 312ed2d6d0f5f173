import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { OverloadGuard } from '../../overload';
import { BudgetGate, microsToUsd } from '../../budget';
import { LaneRegistry, PriorityPolicy } from '../../bulkhead';
import {
  asResilienceError,
  CLOCK,
  type Clock,
  isPromiseLike,
  type LazyAbortController,
  leaseLifetimeMs,
  RANDOM,
  type Random,
  ResilienceError,
} from '../../common';
import { HttpPools } from '../../containment';
import { CallOutcomes } from '../../events';
import { IdempotencyService } from '../../idempotency';
import { admitCall } from '../../pipeline';
import { RateLimiter } from '../../rate-limit';
import { LlmCallReport } from '../llm-call-report';
import { LlmOutcomes } from '../llm-outcomes';
import type { FailoverProgress, Served } from '../routing/failover';
import type { LlmRoute } from '../routing/llm-route';
import { LlmRoutes } from '../routing/llm-routes.service';
import { RequestAccount } from '../routing/request-account';
import { classOf } from '../routing/request-class';
import type { EmbeddingsAnswer } from '../wire';
import type { EmbeddingsCall, EmbeddingsReply } from './embeddings-call';
import { EmbeddingsCache, type EmbeddingsCachePlan } from './embeddings-cache';
import { embeddingInputs, estimateEmbeddingTokens } from './embeddings-request';
import { EmbeddingsRunWork } from './embeddings-run-work';
import { KeyedEmbeddingsRun } from './keyed-embeddings-run';

/**
 * `POST /v1/embeddings` over a route's targets, with the chat route's steps: the route the
 * client's `model` names (refused when a target of it cannot embed), the exact cache (a hit
 * costs a request per minute and nothing else), the rate limit (one request and the inputs'
 * token estimate), at most one run per `Idempotency-Key`, the route's lane, then the chat's
 * failover loop over its targets (breakers, retries, hedges; each attempt's worst case, the
 * estimate at the target's input price, held before it and its prompt tokens charged after).
 */
@Injectable()
export class Embeddings {
  private readonly report: LlmCallReport;
  private readonly logger = new Logger('Bulkhead');

  constructor(
    private readonly routes: LlmRoutes,
    private readonly lanes: LaneRegistry,
    private readonly pools: HttpPools,
    private readonly limiter: RateLimiter,
    private readonly budget: BudgetGate,
    outcomes: CallOutcomes,
    private readonly llmOutcomes: LlmOutcomes,
    private readonly idempotency: IdempotencyService,
    private readonly cache: EmbeddingsCache,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RANDOM) private readonly random: Random,
    // Optional for an app that builds the LLM module without the lanes' own module: no ceilings, the route's class.
    @Optional() @Inject(PriorityPolicy) private readonly priorities: PriorityPolicy | null,
    // Absent or null when the process's overload guard is off (or its module not imported).
    @Optional() @Inject(OverloadGuard) private readonly overload: OverloadGuard | null = null,
  ) {
    this.report = new LlmCallReport(outcomes, llmOutcomes);
  }

  async create(call: EmbeddingsCall): Promise<EmbeddingsReply> {
    const route = this.routes.forTenant(call.request.model, call.tenant);
    if (!route) throw this.routes.unknownRouteError(call.tenant);
    const unable = route.targets.find((target) => !target.provider.embed);
    if (unable) {
      // Its `provider/model`, as `x-bulkhead-served-by` names targets: config the operator wrote, no secret.
      throw new ResilienceError(
        'invalid_request',
        `route ${route.name} does not serve embeddings: its target ${unable.label} cannot embed`,
      );
    }
    const startedAt = this.clock.now();
    const progress: FailoverProgress = { attempts: 0, failovers: 0, tried: [], hedges: [], choices: [] };
    const plan = this.cache.plan(call, route);
    let cache: EmbeddingsReply['cache'] = plan.cache;
    let failure: ResilienceError | undefined;
    try {
      const found = plan.lookup ? await this.cache.find(plan) : null;
      if (found) {
        cache = 'hit';
        // A hit is a request like any other for the requests-per-minute limit, and takes no tokens.
        const limiting = this.limiter.admit(call.tenant, 0, call.headers);
        if (isPromiseLike(limiting)) await limiting;
        return {
          answer: found,
          servedBy: 'cache',
          attempts: 0,
          cache: 'hit',
          costUsd: 0,
          replayed: false,
          hedged: false,
        };
      }
      return await this.serve(call, route, progress, plan);
    } catch (error) {
      failure = asResilienceError(error).withAttempts(progress.attempts);
      call.headers?.header('x-bulkhead-attempts', String(progress.attempts));
      call.headers?.header('x-bulkhead-cache', cache);
      throw failure;
    } finally {
      this.report.request(call, route, startedAt, progress, cache, failure);
    }
  }

  /** A miss: the rate limit (a request, the inputs' estimate), then one run, or once per `Idempotency-Key`. */
  private async serve(
    call: EmbeddingsCall,
    route: LlmRoute,
    progress: FailoverProgress,
    plan: EmbeddingsCachePlan,
  ): Promise<EmbeddingsReply> {
    const inputTokens = estimateEmbeddingTokens(embeddingInputs(call.request));
    const admitting = this.limiter.admit(call.tenant, inputTokens, call.headers);
    const took = isPromiseLike(admitting) ? await admitting : admitting;
    const tokensTaken = took && this.limiter.limitsTokens(call.tenant) ? inputTokens : 0;
    const execute = (abort: LazyAbortController) =>
      this.run(call, route, progress, plan, inputTokens, tokensTaken, abort);
    if (call.idempotencyKey === undefined) return execute(call.abort);
    const leaseMs = leaseLifetimeMs(this.lanes.get(route.lane)!.queueTtlMs, route.deadlineMs);
    let ran = false;
    try {
      return await this.idempotency.runOnce(
        new KeyedEmbeddingsRun(call, route, call.idempotencyKey, leaseMs, progress, (abort) => {
          ran = true;
          return execute(abort);
        }),
      );
    } finally {
      // A request answered by another's run (joined, replayed) used none of the tokens it took.
      if (!ran && tokensTaken > 0) {
        const givingBack = this.limiter.settleTokens(call.tenant, tokensTaken, 0);
        if (givingBack) await givingBack;
      }
    }
  }

  /**
   * One provider run: the lane, then the targets. The run owns its money and tokens, settles
   * them when it ends, and stores its answer in the exact cache when it may.
   */
  private async run(
    call: EmbeddingsCall,
    route: LlmRoute,
    progress: FailoverProgress,
    plan: EmbeddingsCachePlan,
    inputTokens: number,
    tokensTaken: number,
    abort: LazyAbortController,
  ): Promise<EmbeddingsReply> {
    const account = new RequestAccount({
      tenant: call.tenant,
      budget: this.budget,
      limiter: this.limiter,
      clock: this.clock,
      // Embeddings have no output: an attempt's worst case is its input at the target's input price.
      outputCap: 0,
      inputTokens,
      outputTokens: 0,
      holdMs: leaseLifetimeMs(0, route.deadlineMs),
      tokensTakenAtAdmission: tokensTaken,
      onUsageRejected: (target, { field, reason }) => {
        this.llmOutcomes.usageRejected({ route: route.name, target: target.label, field, reason });
        this.logger.warn(`${target.label} reported a usage count not charged as given: ${field} (${reason})`);
      },
    });
    let served: Served<EmbeddingsAnswer> | undefined;
    try {
      const lane = this.lanes.get(route.lane)!;
      const pool = this.pools.get(call.pool);
      const work = new EmbeddingsRunWork(
        this.clock,
        this.random,
        call.tenant,
        route,
        call.request,
        pool,
        abort,
        account,
        progress,
        classOf(this.priorities, route, call),
      );
      // No breaker here: each target has its own, asked inside the failover loop.
      const refusal = admitCall(this.overload, lane, undefined, undefined, work, work);
      if (refusal) throw refusal;
      served = await work.answer;
      this.cache.store(plan, served.completion);
      return {
        answer: served.completion,
        servedBy: served.target.label,
        attempts: progress.attempts,
        cache: plan.cache,
        costUsd: microsToUsd(account.costMicros),
        replayed: false,
        hedged: served.hedged,
      };
    } finally {
      this.report.run(route, progress, served);
      const settling = account.settleTokens();
      if (settling) await settling;
    }
  }
}
