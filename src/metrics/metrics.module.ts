import { Module } from '@nestjs/common';
import { CallMetricsCollector } from './call-metrics.collector';
import { CircuitMetricsCollector } from './circuit-metrics.collector';
import { ContainmentMetricsCollector } from './containment-metrics.collector';
import { SharedStateMetricsCollector } from './shared-state-metrics.collector';
import { LaneMetricsCollector } from './lane-metrics.collector';
import { metricsRegistryProvider, MetricsRegistry } from './metrics-registry.provider';
import { MetricsController } from './metrics.controller';

/** `GET /metrics`: collectors subscribe to mechanism events; mechanisms never import prom-client. */
@Module({
  controllers: [MetricsController],
  providers: [
    metricsRegistryProvider,
    LaneMetricsCollector,
    CallMetricsCollector,
    CircuitMetricsCollector,
    ContainmentMetricsCollector,
    SharedStateMetricsCollector,
  ],
  exports: [MetricsRegistry],
})
export class MetricsModule {}
