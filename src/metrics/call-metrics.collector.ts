import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { Counter } from 'prom-client';
import { CallOutcomes } from '../events';
import { HistogramFamily, type HistogramSeries } from './histogram-family';
import { CALL_DURATION_BUCKETS, METRIC } from './metric-names';
import { MetricsRegistry } from './metrics-registry.provider';

/** One tool and outcome's calls: their durations, and how many of them came over MCP. */
interface CallSeries {
  readonly durations: HistogramSeries;
  mcp: number;
}

/**
 * Calls by tool and outcome. Labels come from configured names only: tool ids of the
 * registry (or `Controller.method` of a company route) and the fixed set of outcomes.
 * `bulkhead_calls_total` is read off the duration histogram's counts when Prometheus scrapes,
 * split by `transport` (`http`, `mcp`: two values, so at most twice the series).
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
  private readonly byTool = new Map<string, Map<string, CallSeries>>();

  constructor(
    // Optional, like every collector's mechanism: metrics of what the app has.
    @Optional() @Inject(CallOutcomes) private readonly outcomes: CallOutcomes | null,
    private readonly registry: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    if (!this.outcomes) return;
    const byTool = this.byTool;
    this.durations.register(this.registry);
    new Counter({
      name: METRIC.calls,
      help: 'Finished calls by tool, outcome and transport (http or mcp)',
      labelNames: ['tool', 'outcome', 'transport'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const byOutcome of byTool.values()) {
          for (const { durations, mcp } of byOutcome.values()) {
            const http = durations.count - mcp;
            if (http > 0) this.inc({ ...durations.labels, transport: 'http' }, http);
            if (mcp > 0) this.inc({ ...durations.labels, transport: 'mcp' }, mcp);
          }
        }
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
        const series = this.seriesFor(outcome.toolId, outcome.status);
        series.durations.observe(outcome.durationMs / 1000);
        if (outcome.transport === 'mcp') series.mcp++;
        if (outcome.replayed) replays.inc({ tool: outcome.toolId });
      }),
      this.outcomes.onRetry((toolId) => retries.inc({ tool: toolId })),
    );
  }

  onModuleDestroy(): void {
    for (const dispose of this.disposers) dispose();
  }

  private seriesFor(tool: string, outcome: string): CallSeries {
    let byOutcome = this.byTool.get(tool);
    if (!byOutcome) {
      byOutcome = new Map();
      this.byTool.set(tool, byOutcome);
    }
    let series = byOutcome.get(outcome);
    if (!series) {
      series = { durations: this.durations.add({ tool, outcome }), mcp: 0 };
      byOutcome.set(outcome, series);
    }
    return series;
  }
}
