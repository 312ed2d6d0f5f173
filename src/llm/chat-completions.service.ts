import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { OverloadGuard } from '../overload';
import { BudgetGate, microsToUsd } from '../budget';
import { LaneRegistry, PriorityPolicy } from '../bulkhead';
import {
  asResilienceError,
  CLOCK,
  type Clock,
  isPromiseLike,
  LazyAbortController,
  leaseLifetimeMs,
  RANDOM,
  type Random,
  ResilienceError,
} from '../common';
import { HttpPools } from '../containment';
import { IdempotencyService } from '../idempotency';
import { admitCall } from '../pipeline';
import { CallOutcomes } from '../events';
import { RateLimiter } from '../rate-limit';
import { Coalescer } from './cache';
import type { ChatAnswer, ChatCall } from './chat-call';
import type { ChatRequest } from './chat.types';
import { type CachePlan, CompletionCaches } from './completion-caches';
import { KeyedChatRun } from './keyed-chat-run';
import { LlmCallReport } from './llm-call-report';
import { LlmOutcomes } from './llm-outcomes';
import { estimateInputTokens } from './pricing';
import { LlmRunWork } from './llm-run-work';
import type { FailoverCall, FailoverProgress, Served } from './routing/failover';
import type { LlmRoute } from './routing/llm-route';
import { LlmRoutes } from './routing/llm-routes.service';
import { cappedRequest } from './routing/capped-request';
import { RequestAccount } from './routing/request-account';
import { classOf } from './routing/request-class';
import type { ChatStreamSink } from './streaming/chat-stream-sink';
import { StreamDelivery } from './stream-delivery';

export type { ChatAnswer, ChatCall } from './chat-call';

/** Tokens a client took at its admission, until a run takes them over. */
interface TokenClaim {
  tokens: number;
}

/** What one provider run of a request needs, worked out once for its client. */
interface RunPlan {
  call: ChatCall;
  route: LlmRoute;
  /** The client's request held to `outputCap`. */
  request: ChatRequest;
  outputCap: number;
  inputTokens: number;
  outputTokens: number;
  /** The tokens its client took; the run that starts takes them over. */
  claim: TokenClaim;
  /** The client's view of the run: the run's own when the client starts it. */
  progress: FailoverProgress;
  startedAt: number;
}

/** What a run served, and what it cost. */
type RunResult = Served & { costMicros: number };

/**
 * `POST /v1/chat/completions`: the steps of a tool call, for a model. After the tenant and its
 * pool (the routing guard): the exact cache (a hit touches no provider and costs nothing but its
 * request per minute), the rate limit (one request and the first attempt's worst-case tokens),
 * identical concurrent misses joined into one, the route's lane, then its targets in order
 * (breakers, retries, each attempt's budget and tokens held before it and settled after).
 */
@Injectable()
export class ChatCompletions {
  private readonly inFlight = new Coalescer<RunResult>();
  private readonly delivery: StreamDelivery;
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
    private readonly caches: CompletionCaches,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RANDOM) private readonly random: Random,
    // Optional for an app that builds the LLM module without the lanes' own module: no ceilings, the route's class.
    @Optional() @Inject(PriorityPolicy) private readonly priorities: PriorityPolicy | null,
    // Absent or null when the process's overload guard is off (or its module not imported).
    @Optional() @Inject(OverloadGuard) private readonly overload: OverloadGuard | null = null,
  ) {
    this.delivery = new StreamDelivery(clock, llmOutcomes);
    this.report = new LlmCallReport(outcomes, llmOutcomes);
  }

  /**
   * A streamed request: its answer through `call.sink`. A failure before the commit point is
   * thrown (the client gets an ordinary error answer); one after it ends the stream with an
   * error event. An answer that did not come from a provider's stream (a cache hit, an
   * idempotent replay) is streamed from the whole completion.
   */
  async stream(call: ChatCall & { sink: ChatStreamSink }): Promise<void> {
    let answer: ChatAnswer;
    try {
      answer = await this.complete(call);
    } catch (error) {
      if (!call.sink.opened) throw error;
      call.sink.fail(asResilienceError(error));
      return;
    }
    if (!answer.streamed) await this.delivery.replay(call, answer);
  }

  async complete(call: ChatCall): Promise<ChatAnswer> {
    const route = this.routes.forTenant(call.request.model, call.tenant);
    if (!route) throw this.routes.unknownRouteError(call.tenant);
    const startedAt = this.clock.now();
    const progress: FailoverProgress = { attempts: 0, failovers: 0, tried: [], hedges: [], choices: [] };
    const plan = this.caches.plan(call, route);
    let cache: ChatAnswer['cache'] = plan.cache;
    let failure: ResilienceError | undefined;
    try {
      const found = plan.lookup ? await this.caches.find(call, route, plan) : null;
      if (found) {
        cache = found.cache;
        // A hit is a request like any other for the requests-per-minute limit, and takes no tokens.
        const limiting = this.limiter.admit(call.tenant, 0, call.headers);
        if (isPromiseLike(limiting)) await limiting;
        return {
          completion: found.completion,
          servedBy: 'cache',
          attempts: 0,
          cache,
          similarity: found.similarity,
          costUsd: 0,
          replayed: false,
          hedged: false,
          streamed: false,
        };
      }
      const answer = await this.serve(call, route, progress, plan, startedAt);
      answer.cache = cache;
      this.caches.rememberAnswer(call, route, plan, answer);
      return answer;
    } catch (error) {
      failure = asResilienceError(error).withAttempts(progress.attempts);
      // A failed request says as much as it can too: how many attempts it made, and whether
      // the cache was consulted (the envelope has the attempts as well).
      call.headers?.header('x-bulkhead-attempts', String(progress.attempts));
      call.headers?.header('x-bulkhead-cache', cache);
      throw failure;
    } finally {
      this.report.request(call, route, startedAt, progress, cache, failure);
    }
  }

  /**
   * A miss: the rate limit (one request, and the first attempt's worst-case tokens), then one
   * provider run for every identical request waiting now, or once per `Idempotency-Key`.
   */
  private async serve(
    call: ChatCall,
    route: LlmRoute,
    progress: FailoverProgress,
    cachePlan: CachePlan,
    startedAt: number,
  ): Promise<ChatAnswer> {
    const { request, outputCap } = cappedRequest(call.request, route.maxOutputTokens);
    // Every choice is billed: n of them may each use the whole cap.
    const outputTokens = outputCap * (request.n ?? 1);
    const inputTokens = estimateInputTokens(request) + (call.passThrough?.extraInputTokens ?? 0);
    const worstCase = inputTokens + outputTokens;
    const admitting = this.limiter.admit(call.tenant, worstCase, call.headers);
    const took = isPromiseLike(admitting) ? await admitting : admitting;
    // What this client took from the tokens-per-minute bucket: handed over to the run it starts,
    // given back when it joins one (or is replayed), since it then uses nothing of its own.
    const claim: TokenClaim = { tokens: took && this.limiter.limitsTokens(call.tenant) ? worstCase : 0 };
    const run: RunPlan = { call, route, request, outputCap, inputTokens, outputTokens, claim, progress, startedAt };
    try {
      if (call.idempotencyKey === undefined) return await this.execute(run, cachePlan, call.abort);
      // At most once per key (IdempotencyService.runOnce); the claim lasts the lane's queue wait
      // and the route's deadline, renewed for as long as the run goes on (a stream outlives any deadline).
      const leaseMs = leaseLifetimeMs(this.lanes.get(route.lane)!.queueTtlMs, route.deadlineMs);
      return await this.idempotency.runOnce(
        new KeyedChatRun(call, route, request, call.idempotencyKey, leaseMs, progress, (abort) =>
          this.execute(run, cachePlan, abort),
        ),
      );
    } finally {
      if (claim.tokens > 0) {
        const givingBack = this.limiter.settleTokens(call.tenant, claim.tokens, 0);
        if (givingBack) await givingBack;
      }
    }
  }

  /**
   * Runs the route for one client, or joins the run of an identical request in flight: only a
   * request the cache may answer is joined (the same key is the same answer), on the same pool (a
   * contained tenant's request never rides a run on the normal pool), and never a stream (its
   * client's own). A joined run stops only once every client waiting for it has left.
   */
  private async execute(plan: RunPlan, cachePlan: CachePlan, abort: LazyAbortController): Promise<ChatAnswer> {
    const { call, progress } = plan;
    const cacheKey = cachePlan.key !== undefined && cachePlan.store ? cachePlan.key : undefined;
    const cache = cachePlan.key === undefined ? 'bypass' : 'miss';
    const { started, outcome } =
      cacheKey === undefined || call.sink
        ? { started: true, outcome: this.run(plan, abort, cacheKey, cache) }
        : this.inFlight.run(
            `${call.pool}:${cacheKey}`,
            (signal) => this.run(plan, abortFollowing(signal), cacheKey, cache),
            { signal: abort.signal },
          );
    const served = await outcome;
    return {
      completion: served.completion,
      servedBy: served.target.label,
      // A client that joined made no attempt and pays nothing: the run's first client did.
      attempts: progress.attempts,
      cache: 'miss',
      costUsd: started ? microsToUsd(served.costMicros) : 0,
      replayed: false,
      hedged: served.hedged,
      streamed: call.sink !== undefined,
    };
  }

  /**
   * One provider run: the route's lane, then its targets. The run owns its money, its tokens and
   * its progress, and settles and reports them when it ends, whoever still waits for it: a
   * joined run goes on after its first client left, and its usage, attempts and tokens count all
   * the same. Its answer is cached when it may be.
   */
  private async run(
    plan: RunPlan,
    abort: LazyAbortController,
    cacheKey: string | undefined,
    cache: ChatAnswer['cache'],
  ): Promise<RunResult> {
    const { call, route, request, progress, claim } = plan;
    const account = new RequestAccount({
      tenant: call.tenant,
      budget: this.budget,
      limiter: this.limiter,
      clock: this.clock,
      outputCap: plan.outputCap,
      inputTokens: plan.inputTokens,
      outputTokens: plan.outputTokens,
      holdMs: leaseLifetimeMs(0, route.deadlineMs),
      tokensTakenAtAdmission: claim.tokens,
      onUsageRejected: (target, { field, reason }) => {
        this.llmOutcomes.usageRejected({ route: route.name, target: target.label, field, reason });
        // The field and why, never its value or anything of the request: a log line is no place for payloads.
        this.logger.warn(`${target.label} reported a usage count not charged as given: ${field} (${reason})`);
      },
    });
    claim.tokens = 0;
    const deliver = call.sink ? this.delivery.for(call, route, account, progress, plan.startedAt, cache) : undefined;
    let served: Served | undefined;
    try {
      served = await this.admitAndServe(call, abort, route, request, account, progress, deliver);
      if (cacheKey !== undefined) this.caches.storeExact(cacheKey, served.completion, request);
      return { ...served, costMicros: account.costMicros };
    } finally {
      this.report.run(route, progress, served);
      const settling = account.settleTokens();
      if (settling) await settling;
    }
  }

  /** The route's lane, then its targets; the slot is held until every request made has stopped. */
  private admitAndServe(
    call: ChatCall,
    abort: LazyAbortController,
    route: LlmRoute,
    request: ChatRequest,
    account: RequestAccount,
    progress: FailoverProgress,
    deliver?: FailoverCall['deliver'],
  ): Promise<Served> {
    const lane = this.lanes.get(route.lane)!;
    const pool = this.pools.get(call.pool);
    const priority = classOf(this.priorities, route, call);
    const work = new LlmRunWork(
      this.clock,
      this.random,
      call,
      route,
      request,
      pool,
      abort,
      account,
      progress,
      deliver,
      priority,
    );
    // No breaker here: each target has its own, asked inside the failover loop.
    const refusal = admitCall(this.overload, lane, undefined, undefined, work, work);
    return refusal ? Promise.reject(refusal) : work.answer;
  }
}

/**
 * A LazyAbortController that aborts when `signal` does: a coalesced run's, whose signal aborts
 * once all its clients left.
 */
function abortFollowing(signal: AbortSignal): LazyAbortController {
  const abort = new LazyAbortController();
  if (signal.aborted) abort.abort(signal.reason);
  else signal.addEventListener('abort', () => abort.abort(signal.reason), { once: true });
  return abort;
}
