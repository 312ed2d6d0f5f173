import type { Provider } from '@nestjs/common';
import { CLOCK, type Clock } from '../../../common';
import { LLM_MODULE_OPTIONS, type LlmModuleOptions } from '../../llm.module-definition';
import { createEmbedder } from './create-embedder';
import { MemorySemanticCacheStore } from './memory-semantic-cache.store';
import { SemanticCache } from './semantic-cache';
import { SemanticCacheStore } from './semantic-cache.store';

/**
 * The semantic cache of the LLM module, from `llm.cache.semantic`: its store (memory, each
 * replica its own; a host may provide another {@link SemanticCacheStore}) and the cache itself,
 * injected by its class. Built even when disabled (it then misses and stores nothing), so the
 * chat service needs no second path.
 */
export const semanticCacheProviders: Provider[] = [
  {
    provide: SemanticCacheStore,
    inject: [LLM_MODULE_OPTIONS, CLOCK],
    useFactory: (options: LlmModuleOptions, clock: Clock): SemanticCacheStore => {
      const { maxEntries, maxEntriesPerPartition, maxBytes } = options.llm.cache.semantic;
      return new MemorySemanticCacheStore(clock, { maxEntries, maxEntriesPerPartition, maxBytes });
    },
  },
  {
    provide: SemanticCache,
    inject: [LLM_MODULE_OPTIONS, SemanticCacheStore, CLOCK],
    useFactory: (options: LlmModuleOptions, store: SemanticCacheStore, clock: Clock): SemanticCache => {
      const { enabled, threshold, ttlMs, embedder } = options.llm.cache.semantic;
      return new SemanticCache(store, createEmbedder(embedder, clock), { enabled, threshold, ttlMs });
    },
  },
];
