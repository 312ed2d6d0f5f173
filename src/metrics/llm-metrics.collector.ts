import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { Counter } from 'prom-client';
import { LlmOutcomes } from '../llm';
import { METRIC } from './metric-names';
import { MetricsRegistry } from './metrics-registry.provider';

/**
 * The LLM route's counters: attempts by route, target and outcome; tokens by route, target and
 * kind; cache lookups by result; failovers by route. Labels are configured route names,
 * `provider/model` of configured targets and error kinds, so the series stay bounded.
 */
@Injectable()
export class LlmMetricsCollector implements OnModuleInit, OnModuleDestroy {
  private disposers: Array<() => void> = [];

  constructor(
    @Optional() @Inject(LlmOutcomes) private readonly outcomes: LlmOutcomes | null,
    private readonly registry: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    const outcomes = this.outcomes;
    if (!outcomes) return;
    const registers = [this.registry];
    const requests = new Counter({
      name: METRIC.llmRequests,
      help: 'Attempts at an LLM target, by route, target (provider/model) and outcome (ok or the error kind)',
      labelNames: ['route', 'target', 'outcome'],
      registers,
    });
    const tokens = new Counter({
      name: METRIC.llmTokens,
      help: 'Tokens of the answers served by a target, by kind (prompt or completion)',
      labelNames: ['route', 'target', 'kind'],
      registers,
    });
    const cache = new Counter({
      name: METRIC.llmCache,
      help: 'LLM requests by exact-cache result: hit, miss, or bypass (the cache was not consulted)',
      labelNames: ['route', 'result'],
      registers,
    });
    const failovers = new Counter({
      name: METRIC.llmFailovers,
      help: 'Times an LLM request moved on to the next target of its route',
      labelNames: ['route'],
      registers,
    });
    this.disposers = [
      outcomes.onAttempt(({ route, target, outcome }) => requests.inc({ route, target, outcome })),
      outcomes.onRequest((outcome) => {
        cache.inc({ route: outcome.route, result: outcome.cache });
        if (outcome.failovers > 0) failovers.inc({ route: outcome.route }, outcome.failovers);
        if (outcome.promptTokens > 0 || outcome.completionTokens > 0) {
          tokens.inc({ route: outcome.route, target: outcome.target, kind: 'prompt' }, outcome.promptTokens);
          tokens.inc({ route: outcome.route, target: outcome.target, kind: 'completion' }, outcome.completionTokens);
        }
      }),
    ];
  }

  onModuleDestroy(): void {
    for (const dispose of this.disposers) dispose();
  }
}
