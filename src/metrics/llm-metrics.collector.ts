import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { Histogram } from 'prom-client';
import { LlmOutcomes } from '../llm';
import { CounterFamily } from './counter-family';
import { METRIC } from './metric-names';
import { MetricsRegistry } from './metrics-registry.provider';

/**
 * The LLM route's counters: attempts by route, target and outcome; tokens by route, target and
 * kind; cache lookups by result; failovers by route; hedges by how they ended; targets chosen
 * and passed over, and why; usage counts not charged as given, and why; and the time a streamed answer took to its first content. Labels are configured route names,
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
    const requests = new CounterFamily(this.registry, {
      name: METRIC.llmRequests,
      help: 'Attempts at an LLM target, by route, target (provider/model) and outcome (ok or the error kind)',
      labelNames: ['route', 'target', 'outcome'],
    });
    const tokens = new CounterFamily(this.registry, {
      name: METRIC.llmTokens,
      help: 'Tokens of the answers served by a target, by kind (prompt or completion)',
      labelNames: ['route', 'target', 'kind'],
    });
    const cache = new CounterFamily(this.registry, {
      name: METRIC.llmCache,
      help: 'LLM requests by cache result: hit (exact), semantic (the answer of a similar question), miss, or bypass (no cache consulted)',
      labelNames: ['route', 'result'],
    });
    const failovers = new CounterFamily(this.registry, {
      name: METRIC.llmFailovers,
      help: 'Times an LLM request moved on to the next target of its route',
      labelNames: ['route'],
    });
    const hedges = new CounterFamily(this.registry, {
      name: METRIC.llmHedges,
      help: 'Hedges an LLM request started, by result: won (its answer was served) or lost (cancelled or failed)',
      labelNames: ['route', 'result'],
    });
    const selected = new CounterFamily(this.registry, {
      name: METRIC.llmTargetSelected,
      help: 'Targets an LLM request chose, by route, target and why: position, weight, least_busy, lowest_latency, no_latency_sample (a target with no recent latency), hedge',
      labelNames: ['route', 'target', 'reason'],
    });
    const skipped = new CounterFamily(this.registry, {
      name: METRIC.llmTargetSkipped,
      help: "Targets an LLM request passed over without an attempt, by route, target and why: context_window (the request would not fit the target's window)",
      labelNames: ['route', 'target', 'reason'],
    });
    const usageRejected = new CounterFamily(this.registry, {
      name: METRIC.llmUsageRejected,
      help: 'Counts of usage a target reported that were not charged as given, by target and why: not_a_number, not_finite, negative, not_integer, above_bound (more than the attempt held)',
      labelNames: ['target', 'reason'],
    });
    const storedResponseErrors = new CounterFamily(this.registry, {
      name: METRIC.llmKeptResponseErrors,
      help: 'Decisions the store of kept responses (/v1/responses) failed, by operation: read (the request got unavailable), write (the answer went out, not kept) or too_large (over maxResponseBytes, not kept)',
      labelNames: ['operation'],
    });
    const firstToken = new Histogram({
      name: METRIC.llmTimeToFirstToken,
      help: 'Seconds from a streamed request to its first content, by route and the target that sent it (retries, failover and hedges included)',
      labelNames: ['route', 'target'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32],
      registers,
    });
    this.disposers = [
      outcomes.onUsageRejected(({ target, reason }) => usageRejected.inc([target, reason])),
      outcomes.onStoredResponseFailure(({ operation }) => storedResponseErrors.inc([operation])),
      outcomes.onFirstToken(({ route, target, seconds }) => firstToken.observe({ route, target }, seconds)),
      outcomes.onAttempt(({ route, target, outcome }) => requests.inc([route, target, outcome])),
      outcomes.onRequest((outcome) => cache.inc([outcome.route, outcome.cache])),
      outcomes.onRun((outcome) => {
        if (outcome.failovers > 0) failovers.inc([outcome.route], outcome.failovers);
        for (const result of outcome.hedges) hedges.inc([outcome.route, result]);
        for (const { target, reason } of outcome.choices) {
          const counter = reason === 'context_window' ? skipped : selected;
          counter.inc([outcome.route, target.label, reason]);
        }
        if (outcome.promptTokens > 0 || outcome.completionTokens > 0) {
          tokens.inc([outcome.route, outcome.target, 'prompt'], outcome.promptTokens);
          tokens.inc([outcome.route, outcome.target, 'completion'], outcome.completionTokens);
        }
      }),
    ];
  }

  onModuleDestroy(): void {
    for (const dispose of this.disposers) dispose();
  }
}
