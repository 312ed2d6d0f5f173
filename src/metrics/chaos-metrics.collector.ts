import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { Counter } from 'prom-client';
import { ChaosRegistry } from '../chaos';
import { METRIC } from './metric-names';
import { MetricsRegistry } from './metrics-registry.provider';

/**
 * What chaos injected on purpose, by target (a tool id, or `llm.<route>/<provider>/<model>`)
 * and kind (a fault kind, or `latency`): beside the failures it caused in the other metrics, so
 * a rehearsal can be told from an outage. Labels come from configured names only.
 */
@Injectable()
export class ChaosMetricsCollector implements OnModuleInit, OnModuleDestroy {
  private dispose: (() => void) | undefined;

  constructor(
    @Optional() @Inject(ChaosRegistry) private readonly chaos: ChaosRegistry | null,
    private readonly registry: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    // A service that cannot inject anything exports no series saying it did not.
    if (!this.chaos?.enabled) return;
    const injected = new Counter({
      name: METRIC.chaosInjected,
      help: 'Faults and delays chaos injected on purpose, by target (tool id or llm.<route>/<provider>/<model>) and kind (a fault kind or latency)',
      labelNames: ['target', 'kind'],
      registers: [this.registry],
    });
    this.dispose = this.chaos.onInjected(({ target, kind }) => injected.inc({ target, kind }));
  }

  onModuleDestroy(): void {
    this.dispose?.();
  }
}
