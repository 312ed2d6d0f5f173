import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { isPromiseLike, noop } from '../../common';
import { canonicalJson } from '../../idempotency';
import { cacheDirectives, isCacheableEmbeddings, LlmCacheStore } from '../cache';
import { LLM_MODULE_OPTIONS, type LlmModuleOptions } from '../llm.module-definition';
import type { LlmRoute } from '../routing/llm-route';
import type { EmbeddingsAnswer, EmbeddingsRequest } from '../wire';
import type { EmbeddingsCall } from './embeddings-call';

/** Bumped whenever what goes into a key changes (as the chat keys' own version). */
const KEY_VERSION = 1;

/** What the exact cache may do for one embeddings request. */
export interface EmbeddingsCachePlan {
  /** Undefined when the route has no exact cache or the client wants neither lookup nor store. */
  readonly key: string | undefined;
  readonly lookup: boolean;
  readonly store: boolean;
  /** `bypass` when the cache is not consulted at all. */
  readonly cache: 'miss' | 'bypass';
}

/**
 * The exact cache for embeddings: the chat's store (memory or Redis, `llm.cache.exact`'s bounds
 * and TTL), under keys of their own (labelled `embeddings`, so no chat request's key can equal
 * one). The same tenant, route and request (inputs, model, dimensions, encoding format, any
 * other field but `user`) is the same answer. A store that fails is a miss, never a failed
 * request, and storing is off the answer's path.
 */
@Injectable()
export class EmbeddingsCache {
  private readonly logger = new Logger('Bulkhead');

  constructor(
    @Inject(LlmCacheStore) private readonly exact: LlmCacheStore,
    @Inject(LLM_MODULE_OPTIONS) private readonly options: LlmModuleOptions,
  ) {}

  plan(call: EmbeddingsCall, route: LlmRoute): EmbeddingsCachePlan {
    const directives = route.cache ? cacheDirectives(call.cacheControl) : { lookup: false, store: false };
    const key =
      directives.lookup || directives.store
        ? embeddingsCacheKey(call.tenant, route.cacheScope, call.request)
        : undefined;
    return { key, lookup: directives.lookup, store: directives.store, cache: key === undefined ? 'bypass' : 'miss' };
  }

  /** The stored answer, or null. Ask only when `plan.lookup`. */
  async find(plan: EmbeddingsCachePlan): Promise<EmbeddingsAnswer | null> {
    if (plan.key === undefined) return null;
    try {
      const gotten = this.exact.get(plan.key);
      const found = isPromiseLike(gotten) ? await gotten : gotten;
      return found && isCacheableEmbeddings(found) ? found : null;
    } catch {
      return null;
    }
  }

  /** Stores a run's answer when the plan says so; a store that fails costs a later miss. */
  store(plan: EmbeddingsCachePlan, answer: EmbeddingsAnswer): void {
    if (plan.key === undefined || !plan.store || !isCacheableEmbeddings(answer)) return;
    try {
      const stored = this.exact.set(plan.key, answer, this.options.llm.cache.exact.ttlMs);
      if (isPromiseLike(stored)) Promise.resolve(stored).catch(noop);
    } catch (error) {
      this.logger.warn(`the LLM cache refused an answer: ${(error as Error)?.name}`);
    }
  }
}

/**
 * SHA-256 hex of the canonical JSON of the tenant, the route's cache scope and every request
 * field that can change the vectors: all but `user` (the end user's id, for abuse monitoring).
 */
export function embeddingsCacheKey(tenant: string, routeScope: string, request: EmbeddingsRequest): string {
  const { user: _user, ...keyed } = request;
  const scoped = canonicalJson({ v: KEY_VERSION, embeddings: true, tenant, route: routeScope, request: keyed });
  return createHash('sha256').update(scoped).digest('hex');
}
