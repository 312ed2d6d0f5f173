import { Controller, Get, Header } from '@nestjs/common';
import { WithoutTenant } from '../common/nest';
import { MetricsRegistry } from './metrics-registry.provider';

@Controller('metrics')
@WithoutTenant()
export class MetricsController {
  constructor(private readonly registry: MetricsRegistry) {}

  /** Prometheus text exposition. */
  @Get()
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}
