import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { CallOutcomes } from '../events';
import { CALL_DURATION_BUCKETS, METRIC } from './metric-names';
import { MetricsRegistry } from './metrics-registry.provider';

/**
 * Calls by tool and outcome. Labels come from configured names only: tool ids of the
 * registry (or `Controller.method` of a company route) and the fixed set of outcomes.
 */
@Injectable()
export class CallMetricsCollector implements OnModuleInit, OnModuleDestroy {
  private dispose: (() => void) | undefined;

  constructor(
    private readonly outcomes: CallOutcomes,
    private readonly registry: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    const registers = [this.registry];
    const calls = new Counter({
      name: METRIC.calls,
      help: 'Finished calls by tool and outcome',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    const duration = new Histogram({
      name: METRIC.callDuration,
      help: 'Call duration from arrival to answer, queue wait included',
      labelNames: ['tool', 'outcome'],
      buckets: CALL_DURATION_BUCKETS,
      registers,
    });
    this.dispose = this.outcomes.onOutcome((outcome) => {
      const labels = { tool: outcome.toolId, outcome: outcome.status };
      calls.inc(labels);
      duration.observe(labels, outcome.durationMs / 1000);
    });
  }

  onModuleDestroy(): void {
    this.dispose?.();
  }
}
