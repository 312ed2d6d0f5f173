import type { ResilienceError } from '../common';
import type { CallOutcomes } from '../events';
import type { ChatAnswer, ChatCall } from './chat-call';
import type { LlmOutcomes } from './llm-outcomes';
import { chosenTarget } from './routing/chosen-target';
import type { FailoverProgress, Served } from './routing/failover';
import type { LlmRoute } from './routing/llm-route';

/** What of an answer the report reads: its usage (a chat completion's, or embeddings' without completion tokens). */
interface UsageCarrier {
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/**
 * What an LLM request reports, and when: each provider run once, as it ends (its attempts,
 * failovers, hedges, tokens), whoever still waits for it; each client's request once, as it
 * gets its answer or leaves (the metrics' request line and the call ledger).
 */
export class LlmCallReport {
  constructor(
    private readonly outcomes: CallOutcomes,
    private readonly llmOutcomes: LlmOutcomes,
  ) {}

  /** What the providers were asked and answered in one run: once per run, when it ends. */
  run(route: LlmRoute, progress: FailoverProgress, served: Served<UsageCarrier> | undefined): void {
    for (const { target, outcome } of progress.tried) {
      this.llmOutcomes.attempt({ route: route.name, target: target.label, outcome });
    }
    const usage = served?.completion.usage;
    this.llmOutcomes.run({
      route: route.name,
      target: served?.target.label ?? progress.tried.at(-1)?.target.label ?? '',
      failovers: progress.failovers,
      hedges: progress.hedges,
      choices: progress.choices,
      promptTokens: usage?.prompt_tokens ?? 0,
      completionTokens: usage?.completion_tokens ?? 0,
    });
  }

  /** How the request ended for its client: once per client, as it gets its answer or leaves. */
  request(
    call: Pick<ChatCall, 'callId' | 'tenant' | 'pool' | 'abort'>,
    route: LlmRoute,
    startedAt: number,
    progress: FailoverProgress,
    cache: ChatAnswer['cache'],
    failure: ResilienceError | undefined,
  ): void {
    this.llmOutcomes.request({ route: route.name, outcome: failure ? failure.kind : 'ok', cache });
    const chosen = chosenTarget(progress);
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
      target: chosen?.target.label,
      choice: chosen?.reason,
    });
  }
}
