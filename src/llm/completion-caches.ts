import { Inject, Injectable, Logger } from '@nestjs/common';
import { isPromiseLike, noop } from '../common';
import { HttpPools } from '../containment';
import {
  cacheDirectives,
  exactCacheKey,
  isCacheable,
  isCachedCompletion,
  isSemanticCacheable,
  LlmCacheStore,
  SemanticCache,
} from './cache';
import type { ChatAnswer, ChatCall } from './chat-call';
import type { ChatCompletion, ChatRequest } from './chat.types';
import { LLM_MODULE_OPTIONS, type LlmModuleOptions } from './llm.module-definition';
import type { LlmRoute } from './routing/llm-route';

/** What the caches may do for one request, from its route and its `Cache-Control`. */
export interface CachePlan {
  /** The exact cache's key; undefined when the route has no exact cache or the client wants neither. */
  readonly key: string | undefined;
  /** Serve a stored answer if there is one. */
  readonly lookup: boolean;
  /** Store the answer this request gets. */
  readonly store: boolean;
  /** The semantic cache may answer and learn this request. */
  readonly semantic: boolean;
  /** `bypass` when no cache is consulted at all, `miss` until one answers. */
  readonly cache: 'miss' | 'bypass';
}

/** A stored answer: from the exact cache, or the semantic one with its similarity. */
export interface CachedAnswer {
  readonly completion: ChatCompletion;
  readonly cache: 'hit' | 'semantic';
  readonly similarity: number | undefined;
}

/**
 * The LLM route's two caches as one stage: the exact cache (same tenant, route and request) and
 * the semantic one (a question close enough). A cache that fails is a miss, never a failed
 * request, and storing is off the answer's path.
 */
@Injectable()
export class CompletionCaches {
  private readonly logger = new Logger('Bulkhead');

  constructor(
    @Inject(LlmCacheStore) private readonly exact: LlmCacheStore,
    private readonly semantic: SemanticCache,
    private readonly pools: HttpPools,
    @Inject(LLM_MODULE_OPTIONS) private readonly options: LlmModuleOptions,
  ) {}

  plan(call: ChatCall, route: LlmRoute): CachePlan {
    const directives =
      route.cache || route.semanticCache ? cacheDirectives(call.cacheControl) : { lookup: false, store: false };
    const semantic = route.semanticCache && this.semantic.enabled && isSemanticCacheable(call.request);
    const key =
      route.cache && (directives.lookup || directives.store)
        ? exactCacheKey(call.tenant, route.cacheScope, call.request, call.passThrough)
        : undefined;
    const cache = key === undefined && !semantic ? 'bypass' : 'miss';
    return { key, lookup: directives.lookup, store: directives.store, semantic, cache };
  }

  /** The exact cache's answer, else the semantic cache's, else null. Ask only when `plan.lookup`. */
  async find(call: ChatCall, route: LlmRoute, plan: CachePlan): Promise<CachedAnswer | null> {
    const hit = plan.key === undefined ? null : await this.lookupExact(plan.key);
    if (hit) return { completion: hit, cache: 'hit', similarity: undefined };
    if (!plan.semantic) return null;
    const match = await this.semantic.find(call.tenant, route.cacheScope, call.request, this.pools.get(call.pool));
    return match ? { completion: match.completion, cache: 'semantic', similarity: match.similarity } : null;
  }

  /** Teaches the semantic cache a provider's answer, off the answer's path; a lost entry costs a miss. */
  rememberAnswer(call: ChatCall, route: LlmRoute, plan: CachePlan, answer: ChatAnswer): void {
    if (plan.semantic && plan.store && answer.attempts > 0 && !answer.replayed) {
      const pool = this.pools.get(call.pool);
      // A similar question may come from any client of the route: it learns the answer every
      // client reads, not the one a target sent in the client's own wire format.
      const { passThroughAnswer: _passThrough, ...completion } = answer.completion;
      void this.semantic.remember(call.tenant, route.cacheScope, call.request, completion, pool);
    }
  }

  /**
   * Stores a run's answer in the exact cache when it may be, off the answer's path: a store that
   * fails costs a later miss, never this request.
   */
  storeExact(key: string, completion: ChatCompletion, request: ChatRequest): void {
    if (!isCacheable(completion, request)) return;
    try {
      const stored = this.exact.set(key, completion, this.options.llm.cache.exact.ttlMs);
      if (isPromiseLike(stored)) Promise.resolve(stored).catch(noop);
    } catch (error) {
      this.logger.warn(`the LLM cache refused an answer: ${(error as Error)?.name}`);
    }
  }

  private async lookupExact(key: string): Promise<ChatCompletion | null> {
    try {
      const gotten = this.exact.get(key);
      const found = isPromiseLike(gotten) ? await gotten : gotten;
      // Embeddings are stored under keys of their own: a chat key never finds one.
      return found && isCachedCompletion(found) ? found : null;
    } catch {
      return null;
    }
  }
}
