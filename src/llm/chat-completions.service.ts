import { Inject, Injectable, Logger } from '@nestjs/common';
import { BudgetGate, microsToUsd } from '../budget';
import { LaneRegistry, laneRejectionError } from '../bulkhead';
import {
  asResilienceError,
  CLOCK,
  type Clock,
  isPromiseLike,
  LazyAbortController,
  RANDOM,
  type Random,
  ResilienceError,
} from '../common';
import { HttpPools, type PoolName } from '../containment';
import {
  fromStored,
  IdempotencyService,
  scopedIdempotencyKey,
  type StoredOutcome,
  toStored,
  untilAborted,
} from '../dispatch';
import { CallOutcomes } from '../events';
import { type HeaderSink, RateLimiter } from '../rate-limit';
import {
  cacheDirectives,
  type CacheableCompletion,
  Coalescer,
  exactCacheKey,
  isCacheable,
  isSemanticCacheable,
  LlmCacheStore,
  SemanticCache,
} from './cache';
import type { ChatCompletion, ChatRequest } from './chat.types';
import { LLM_MODULE_OPTIONS, type LlmModuleOptions } from './llm.module-definition';
import { LlmOutcomes } from './llm-outcomes';
import { estimateInputTokens } from './pricing';
import { type FailoverCall, type FailoverProgress, type Served, serveWithFailover } from './routing/failover';
import type { LlmRoute } from './routing/llm-route';
import { LlmRoutes } from './routing/llm-routes.service';
import { RequestAccount } from './routing/request-account';
import type { ChatStreamSink } from './streaming/chat-stream-sink';
import { StreamDelivery } from './streaming/stream-delivery';

/** One validated chat request, with its caller, ready for the route. */
export interface ChatCall {
  request: ChatRequest;
  callId: string;
  tenant: string;
  /** The HTTP pool the containment snapshot gave this call. */
  pool: PoolName;
  abort: LazyAbortController;
  /** The request's `Cache-Control`. */
  cacheControl?: string;
  /** Where the RateLimit headers go. */
  headers?: HeaderSink;
  /** The caller's `Idempotency-Key`, validated. */
  idempotencyKey?: string;
  /** A streamed request (`stream: true`): where its answer goes from the commit point on. */
  sink?: ChatStreamSink;
}

/** What the client gets: the completion and who served it, how. */
export interface ChatAnswer {
  completion: ChatCompletion;
  /** `provider/model`, or `cache`. */
  servedBy: string;
  attempts: number;
  /** `hit`: the exact cache; `semantic`: the answer of a similar question. */
  cache: 'hit' | 'semantic' | 'miss' | 'bypass';
  /** A semantic hit: how similar its question was to this one (cosine, 0..1). */
  similarity?: number;
  costUsd: number;
  /** The answer of an earlier request with the same `Idempotency-Key`. */
  replayed: boolean;
  /** The answer came from a hedge. */
  hedged: boolean;
  /** Streamed: it already went to the client through the sink, as the provider streamed it. */
  streamed: boolean;
}

/** Extra time a reservation is held beyond the request's own worst case, for answering. */
const HOLD_MARGIN_MS = 5_000;

/**
 * `POST /v1/chat/completions`: the steps of a tool call, for a model. After the tenant and its
 * pool (the routing guard): the exact cache (a hit touches no provider and costs nothing but its
 * request per minute), the rate limit (one request and the first attempt's worst-case tokens),
 * identical concurrent misses joined into one, the route's lane, then its targets in order
 * (breakers, retries, each attempt's budget and tokens held before it and settled after).
 */
@Injectable()
export class ChatCompletions {
  private readonly logger = new Logger('Bulkhead');
  private readonly inFlight = new Coalescer<Served & { progress: FailoverProgress }>();
  private readonly delivery: StreamDelivery;

  constructor(
    private readonly routes: LlmRoutes,
    private readonly lanes: LaneRegistry,
    private readonly pools: HttpPools,
    private readonly limiter: RateLimiter,
    private readonly budget: BudgetGate,
    private readonly outcomes: CallOutcomes,
    private readonly llmOutcomes: LlmOutcomes,
    private readonly idempotency: IdempotencyService,
    @Inject(LlmCacheStore) private readonly cache: LlmCacheStore,
    private readonly semantic: SemanticCache,
    @Inject(LLM_MODULE_OPTIONS) private readonly options: LlmModuleOptions,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RANDOM) private readonly random: Random,
  ) {
    this.delivery = new StreamDelivery(clock, llmOutcomes);
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
    const route = this.routes.get(call.request.model);
    if (!route) {
      throw new ResilienceError('not_found', `no LLM route of that name (routes: ${this.routes.names().join(', ')})`);
    }
    const startedAt = this.clock.now();
    const progress: FailoverProgress = { attempts: 0, failovers: 0, tried: [], hedges: [] };
    const directives =
      route.cache || route.semanticCache ? cacheDirectives(call.cacheControl) : { lookup: false, store: false };
    const semantic = route.semanticCache && this.semantic.enabled && isSemanticCacheable(call.request);
    const key =
      route.cache && (directives.lookup || directives.store)
        ? exactCacheKey(call.tenant, route.cacheScope, call.request)
        : undefined;
    let cache: ChatAnswer['cache'] = key === undefined && !semantic ? 'bypass' : 'miss';
    let answer: ChatAnswer | undefined;
    let failure: ResilienceError | undefined;
    try {
      if (directives.lookup) {
        const hit = key === undefined ? null : await this.lookup(key);
        const match =
          hit || !semantic
            ? null
            : await this.semantic.find(call.tenant, route.cacheScope, call.request, this.pools.get(call.pool));
        const found = hit ?? match?.completion;
        if (found) {
          cache = hit ? 'hit' : 'semantic';
          // A hit is a request like any other for the requests-per-minute limit, and takes no tokens.
          const limiting = this.limiter.admit(call.tenant, 0, call.headers);
          if (isPromiseLike(limiting)) await limiting;
          answer = {
            completion: found,
            servedBy: 'cache',
            attempts: 0,
            cache,
            similarity: match?.similarity,
            costUsd: 0,
            replayed: false,
            hedged: false,
            streamed: false,
          };
          return answer;
        }
      }
      answer = await this.serve(call, route, progress, key, directives.store, startedAt);
      answer.cache = cache;
      if (semantic && directives.store && answer.attempts > 0 && !answer.replayed) {
        // Off the answer's path; it never fails, and a miss is all a lost entry costs.
        const pool = this.pools.get(call.pool);
        void this.semantic.remember(call.tenant, route.cacheScope, call.request, answer.completion, pool);
      }
      return answer;
    } catch (error) {
      failure = asResilienceError(error).withAttempts(progress.attempts);
      // A failed request says as much as it can too: how many attempts it made, and whether
      // the cache was consulted (the envelope has the attempts as well).
      call.headers?.header('x-bulkhead-attempts', String(progress.attempts));
      call.headers?.header('x-bulkhead-cache', cache);
      throw failure;
    } finally {
      this.record(call, route, startedAt, progress, cache, answer, failure);
    }
  }

  /** A miss: the rate limit, then one provider call for every identical request waiting now. */
  private async serve(
    call: ChatCall,
    route: LlmRoute,
    progress: FailoverProgress,
    key: string | undefined,
    store: boolean,
    startedAt: number,
  ): Promise<ChatAnswer> {
    const outputCap = call.request.max_completion_tokens ?? call.request.max_tokens ?? route.maxOutputTokens;
    // The provider is held to the cap the reservations assume.
    const request: ChatRequest =
      call.request.max_completion_tokens === undefined && call.request.max_tokens === undefined
        ? { ...call.request, max_tokens: outputCap }
        : call.request;
    // Every choice is billed: n of them may each use the whole cap.
    const outputTokens = outputCap * (request.n ?? 1);
    const inputTokens = estimateInputTokens(request);
    const limiting = this.limiter.admit(call.tenant, inputTokens + outputTokens, call.headers);
    if (isPromiseLike(limiting)) await limiting;
    const account = new RequestAccount(
      outputCap,
      call.tenant,
      this.budget,
      this.limiter,
      inputTokens,
      outputTokens,
      route.deadlineMs + HOLD_MARGIN_MS,
      this.limiter.limitsTokens(call.tenant) ? inputTokens + outputTokens : 0,
    );
    try {
      const deliver = call.sink
        ? this.delivery.for(call, route, account, progress, startedAt, key === undefined ? 'bypass' : 'miss')
        : undefined;
      // Only requests the cache may answer are joined: the same key is the same answer. A joined
      // run stops only once every client waiting for it has left. A stream is its client's own.
      const execute = async (abort: LazyAbortController): Promise<ChatAnswer> => {
        const served =
          key === undefined || !store || deliver
            ? await this.admitAndServe(call, abort, route, request, account, progress, deliver)
            : await this.inFlight.run(
                key,
                (signal) => this.admitAndServe(call, abortOn(signal), route, request, account, progress),
                { signal: abort.signal },
              );
        const joined = served.progress !== progress;
        if (!joined && key !== undefined && store && isCacheable(served.completion, request)) {
          this.keep(key, served.completion);
        }
        return {
          completion: served.completion,
          servedBy: served.target.label,
          attempts: progress.attempts,
          cache: 'miss',
          costUsd: joined ? 0 : microsToUsd(account.costMicros),
          replayed: false,
          hedged: served.hedged,
          streamed: deliver !== undefined,
        };
      };
      if (call.idempotencyKey === undefined) return await execute(call.abort);
      return await this.once(call, route, call.idempotencyKey, request, progress, execute);
    } finally {
      const settling = account.settleTokens();
      if (settling) await settling;
    }
  }

  /**
   * A request with an `Idempotency-Key`: the first runs to its end even if its client leaves
   * (only shutdown stops it), so that the client's retry gets its answer instead of paying for
   * a second one; a request with the same key while it runs joins it, and one after it is
   * answered the same (`replayed`) for the retention window. The same key with another request
   * is `idempotency_conflict`.
   */
  private async once(
    call: ChatCall,
    route: LlmRoute,
    idempotencyKey: string,
    request: ChatRequest,
    progress: FailoverProgress,
    execute: (abort: LazyAbortController) => Promise<ChatAnswer>,
  ): Promise<ChatAnswer> {
    const scoped = scopedIdempotencyKey(call.tenant, `llm.${route.name}`, idempotencyKey);
    const leaseMs = route.deadlineMs + HOLD_MARGIN_MS;
    const decision = await this.idempotency.begin(scoped, request, leaseMs, call.abort);
    if (decision.kind !== 'lead') {
      const outcome = decision.kind === 'join' ? await untilAborted(decision.outcome, call.abort) : decision.outcome;
      if (!outcome.ok) throw fromStored(outcome);
      return { ...(outcome.result as ChatAnswer), costUsd: 0, replayed: true, streamed: false };
    }
    let outcome: StoredOutcome | undefined;
    try {
      const answer = await execute(new LazyAbortController());
      outcome = { ok: true, result: answer, attempts: answer.attempts, pool: call.pool };
      return answer;
    } catch (error) {
      outcome = toStored(asResilienceError(error).withAttempts(progress.attempts));
      throw error;
    } finally {
      await decision.finish(outcome!, progress.attempts > 0);
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
  ): Promise<Served & { progress: FailoverProgress }> {
    const lane = this.lanes.get(route.lane)!;
    const run = lane.run(
      () =>
        serveWithFailover(this.clock, this.random, {
          route,
          request,
          pool: this.pools.get(call.pool),
          abort,
          account,
          progress,
          deliver,
          tenant: call.tenant,
        }),
      { tenant: call.tenant, abort },
    );
    if (typeof run === 'string') return Promise.reject(laneRejectionError(lane, run));
    return run.then((served) => ({ ...served, progress }));
  }

  /** A cached answer, or null; a cache that fails is a miss, never a failed request. */
  private async lookup(key: string): Promise<ChatCompletion | null> {
    try {
      const found = this.cache.get(key);
      return isPromiseLike(found) ? await found : found;
    } catch {
      return null;
    }
  }

  private keep(key: string, completion: CacheableCompletion): void {
    try {
      const stored = this.cache.set(key, completion, this.options.llm.cache.exact.ttlMs);
      if (isPromiseLike(stored)) Promise.resolve(stored).catch(() => undefined);
    } catch (error) {
      this.logger.warn(`the LLM cache refused an answer: ${(error as Error)?.name}`);
    }
  }

  private record(
    call: ChatCall,
    route: LlmRoute,
    startedAt: number,
    progress: FailoverProgress,
    cache: ChatAnswer['cache'],
    answer: ChatAnswer | undefined,
    failure: ResilienceError | undefined,
  ): void {
    for (const { target, outcome } of progress.tried) {
      this.llmOutcomes.attempt({ route: route.name, target: target.label, outcome });
    }
    const usage = answer && answer.attempts > 0 && !answer.replayed ? answer.completion.usage : undefined;
    this.llmOutcomes.request({
      route: route.name,
      target: answer ? (answer.attempts === 0 ? '' : answer.servedBy) : (progress.tried.at(-1)?.target.label ?? ''),
      outcome: failure ? failure.kind : 'ok',
      cache,
      failovers: progress.failovers,
      hedges: progress.hedges,
      promptTokens: usage?.prompt_tokens ?? 0,
      completionTokens: usage?.completion_tokens ?? 0,
    });
    this.outcomes.finish({
      callId: call.callId,
      toolId: `llm.${route.name}`,
      lane: route.lane,
      tenant: call.tenant,
      pool: call.pool,
      abort: call.abort,
      startedAt,
      started: progress.attempts > 0,
      attempts: progress.attempts,
      replayed: cache === 'hit' || cache === 'semantic',
      error: failure,
    });
  }
}

/** A call's cancellation that follows `signal`: a joined run's, which aborts once all its clients left. */
function abortOn(signal: AbortSignal): LazyAbortController {
  const abort = new LazyAbortController();
  if (signal.aborted) abort.abort(signal.reason);
  else signal.addEventListener('abort', () => abort.abort(signal.reason), { once: true });
  return abort;
}
