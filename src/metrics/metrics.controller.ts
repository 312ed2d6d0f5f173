import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ResilienceError } from '../common';
import { WithoutTenant } from '../common/nest';
import { METRICS_MODULE_OPTIONS, type MetricsModuleOptions } from './metrics.module-definition';
import { MetricsRegistry } from './metrics-registry.provider';
import { METRICS_CONTENT_TYPE } from './metrics-server';

@Controller('metrics')
@WithoutTenant()
export class MetricsController {
  constructor(
    private readonly registry: MetricsRegistry,
    @Inject(METRICS_MODULE_OPTIONS) private readonly options: MetricsModuleOptions,
  ) {}

  /** Prometheus text exposition; 404 here when the metrics have a port of their own. */
  @Get()
  @Header('content-type', METRICS_CONTENT_TYPE)
  scrape(): Promise<string> {
    if (this.options.port !== undefined) {
      throw new ResilienceError('not_found', 'metrics are served on their own port (server.metricsPort)');
    }
    return this.registry.metrics();
  }
}
