import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { Counter } from 'prom-client';
import { CallOutcomes } from '../events';
import { HistogramFamily, type HistogramSeries } from './histogram-family';
import { CALL_DURATION_BUCKETS, METRIC } from './metric-names';
import { MetricsRegistry } from './metrics-registry.provider';

/**
 * Calls by tool and outcome. Labels come from configured names only: tool ids of the
 * registry (or `Controller.method` of a company route) and the fixed set of outcomes.
 * `bulkhead_calls_total` is read off the duration histogram's counts when Prometheus scrapes.
 */
@Injectable()
export class CallMetricsCollector implements OnModuleInit, OnModuleDestroy {
  private readonly disposers: Array<() => void> = [];
  private readonly durations = new HistogramFamily(
    METRIC.callDuration,
    'Call duration from arrival to answer, queue wait included',
    CALL_DURATION_BUCKETS,
  );
  /** Series by tool, then outcome: two map look-ups per call, no allocation. */
  private readonly byTool = new Map<string, Map<string, HistogramSeries>>();

  constructor(
    // Optional, like every collector's mechanism: metrics of what the app has.
    @Optional() @Inject(CallOutcomes) private readonly outcomes: CallOutcomes | null,
    private readonly registry: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    if (!this.outcomes) return;
    const durations = this.durations;
    this.durations.register(this.registry);
    new Counter({
      name: METRIC.calls,
      help: 'Finished calls by tool and outcome',
      labelNames: ['tool', 'outcome'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const series of durations.all()) this.inc(series.labels, series.count);
      },
    });
    const retries = new Counter({
      name: METRIC.retries,
      help: 'Retries started, by tool',
      labelNames: ['tool'],
      registers: [this.registry],
    });
    const replays = new Counter({
      name: METRIC.idempotentReplays,
      help: 'Calls answered with the outcome of an earlier or running call with the same idempotency key',
      labelNames: ['tool'],
      registers: [this.registry],
    });
    this.disposers.push(
      this.outcomes.onOutcome((outcome) => {
        this.seriesFor(outcome.toolId, outcome.status).observe(outcome.durationMs / 1000);
        if (outcome.replayed) replays.inc({ tool: outcome.toolId });
      }),
      this.outcomes.onRetry((toolId) => retries.inc({ tool: toolId })),
    );
  }

  onModuleDestroy(): void {
    for (const dispose of this.disposers) dispose();
  }

  private seriesFor(tool: string, outcome: string): HistogramSeries {
    let byOutcome = this.byTool.get(tool);
    if (!byOutcome) {
      byOutcome = new Map();
      this.byTool.set(tool, byOutcome);
    }
    let series = byOutcome.get(outcome);
    if (!series) {
      series = this.durations.add({ tool, outcome });
      byOutcome.set(outcome, series);
    }
    return series;
  }
}
