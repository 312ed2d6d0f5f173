import { Module } from '@nestjs/common';
import { CommonModule } from '../common/nest';
import { EventsModule } from '../events';
import { LlmCacheStore, MemoryLlmCacheStore, RedisLlmCacheStore, SemanticCache } from './cache';
import { sharedStoreProvider } from '../store';
import { semanticCacheProviders } from './cache/semantic/semantic-cache.providers';
import { ChatCompletionsController } from './chat-completions.controller';
import { ChatCompletions } from './chat-completions.service';
import { CompletionCaches } from './completion-caches';
import { EmbeddingsCache } from './embeddings/embeddings-cache';
import { EmbeddingsController } from './embeddings/embeddings.controller';
import { Embeddings } from './embeddings/embeddings.service';
import { LLM_MODULE_OPTIONS, LlmConfigurableModule, type LlmModuleOptions } from './llm.module-definition';
import { LlmGateway } from './llm-gateway.service';
import { LlmOutcomes } from './llm-outcomes';
import { MessagesController } from './messages/messages.controller';
import { ModelsController } from './models/models.controller';
import { ResponsesController } from './responses/responses.controller';
import {
  MemoryStoredResponsesStore,
  RedisStoredResponsesStore,
  StoredResponses,
  StoredResponsesStore,
} from './responses/stored';
import { LlmRoutes } from './routing/llm-routes.service';

/**
 * The OpenAI-compatible LLM route (`POST /v1/chat/completions`) over the routes of `llm.routes`.
 * It runs in the lanes, breakers, rate limits, budgets, pools and idempotency of the modules
 * beside it, which it expects in the same app (BulkheadModule brings them all). Its exact cache is
 * in Redis when StoreModule holds a connection, in memory (bounded by `llm.cache.exact`) otherwise; so are the responses `/v1/responses` keeps
 * (`llm.responses.stored`).
 */
@Module({
  imports: [CommonModule, EventsModule],
  providers: [
    sharedStoreProvider<LlmCacheStore, LlmModuleOptions>(LlmCacheStore, LLM_MODULE_OPTIONS, {
      own: (options) => options.customCacheStore,
      memory: (options, clock) => new MemoryLlmCacheStore(clock, options.llm.cache.exact),
      redis: ({ connection, keys }) => new RedisLlmCacheStore(connection, keys),
    }),
    sharedStoreProvider<StoredResponsesStore, LlmModuleOptions>(StoredResponsesStore, LLM_MODULE_OPTIONS, {
      own: () => undefined,
      memory: (options, clock) => new MemoryStoredResponsesStore(clock, options.llm.responses.stored),
      redis: ({ connection, keys }, options) =>
        new RedisStoredResponsesStore(connection, keys, options.llm.responses.stored.maxResponseBytes),
    }),
    StoredResponses,
    LlmRoutes,
    CompletionCaches,
    ChatCompletions,
    EmbeddingsCache,
    Embeddings,
    LlmGateway,
    LlmOutcomes,
    ...semanticCacheProviders,
  ],
  exports: [LlmCacheStore, LlmRoutes, ChatCompletions, Embeddings, LlmGateway, LlmOutcomes, SemanticCache],
})
export class LlmModule extends LlmConfigurableModule {
  static readonly routes = [
    ChatCompletionsController,
    EmbeddingsController,
    MessagesController,
    ResponsesController,
    ModelsController,
  ];
}
