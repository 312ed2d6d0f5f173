import { Module } from '@nestjs/common';
import { CommonModule } from '../common/nest';
import { EventsModule } from '../events';
import { SemanticCache } from './cache';
import { semanticCacheProviders } from './cache/semantic/semantic-cache.providers';
import { ChatCompletionsController } from './chat-completions.controller';
import { ChatCompletions } from './chat-completions.service';
import { LlmConfigurableModule } from './llm.module-definition';
import { LlmOutcomes } from './llm-outcomes';
import { LlmRoutes } from './routing/llm-routes.service';

/**
 * The OpenAI-compatible LLM route (`POST /v1/chat/completions`) over the routes of `llm.routes`.
 * It runs in the lanes, breakers, rate limits, budgets, pools and stores of the modules beside
 * it, which it expects in the same app (BulkheadModule brings them all).
 */
@Module({
  imports: [CommonModule, EventsModule],
  providers: [LlmRoutes, ChatCompletions, LlmOutcomes, ...semanticCacheProviders],
  exports: [LlmRoutes, ChatCompletions, LlmOutcomes, SemanticCache],
})
export class LlmModule extends LlmConfigurableModule {
  static readonly routes = [ChatCompletionsController];
}
