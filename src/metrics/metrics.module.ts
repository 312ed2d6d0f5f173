import { Module } from '@nestjs/common';
import { CallMetricsCollector } from './call-metrics.collector';
import { ChaosMetricsCollector } from './chaos-metrics.collector';
import { CircuitMetricsCollector } from './circuit-metrics.collector';
import { ContainmentMetricsCollector } from './containment-metrics.collector';
import { LaneMetricsCollector } from './lane-metrics.collector';
import { LlmMetricsCollector } from './llm-metrics.collector';
import { McpPinningMetricsCollector } from './mcp-pinning-metrics.collector';
import { OverloadMetricsCollector } from './overload-metrics.collector';
import { MetricsConfigurableModule } from './metrics.module-definition';
import { metricsRegistryProvider, MetricsRegistry } from './metrics-registry.provider';
import { MetricsController } from './metrics.controller';
import { MetricsServer } from './metrics-server';
import { SharedStateMetricsCollector } from './shared-state-metrics.collector';
import { UnexpectedErrorsCollector } from './unexpected-errors.collector';

/**
 * `GET /metrics` (on the app's port, or on `port` of its own) and the app's prom-client registry (inject `MetricsRegistry` to add your own
 * metrics). Collectors read the mechanisms of the modules present in the app when Prometheus
 * scrapes; mechanisms never import prom-client.
 */
@Module({
  providers: [
    metricsRegistryProvider,
    LaneMetricsCollector,
    CallMetricsCollector,
    CircuitMetricsCollector,
    ContainmentMetricsCollector,
    SharedStateMetricsCollector,
    LlmMetricsCollector,
    ChaosMetricsCollector,
    McpPinningMetricsCollector,
    OverloadMetricsCollector,
    UnexpectedErrorsCollector,
    MetricsServer,
  ],
  exports: [MetricsRegistry],
})
export class MetricsModule extends MetricsConfigurableModule {
  static readonly routes = [MetricsController];
}
