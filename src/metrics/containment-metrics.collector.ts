import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { ContainmentRouter, HttpPools } from '../containment';
import { METRIC } from './metric-names';
import { MetricsRegistry } from './metrics-registry.provider';

/** Containment routing decisions and the two HTTP pools' requests in flight, all read when Prometheus scrapes. */
@Injectable()
export class ContainmentMetricsCollector implements OnModuleInit {
  constructor(
    @Optional() @Inject(ContainmentRouter) private readonly router: ContainmentRouter | null,
    @Optional() @Inject(HttpPools) private readonly pools: HttpPools | null,
    private readonly registry: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    const { router, pools } = this;
    if (!router || !pools) return;
    const registers = [this.registry];
    new Counter({
      name: METRIC.containmentRoutes,
      help: 'Calls routed by containment, by pool (or denied) and why',
      labelNames: ['pool', 'reason'],
      registers,
      collect() {
        this.reset();
        for (const [decision, count] of router.counts()) {
          this.inc({ pool: decision.deny ? 'denied' : decision.pool, reason: decision.reason }, count);
        }
      },
    });
    new Gauge({
      name: METRIC.httpPoolActive,
      help: 'Outbound requests in flight in the pool now',
      labelNames: ['pool'],
      registers,
      collect() {
        for (const pool of pools.all()) this.set({ pool: pool.name }, pool.snapshot().active);
      },
    });
    new Gauge({
      name: METRIC.httpPoolPeak,
      help: 'Most outbound requests ever in flight in the pool at once',
      labelNames: ['pool'],
      registers,
      collect() {
        for (const pool of pools.all()) this.set({ pool: pool.name }, pool.snapshot().peak);
      },
    });
  }
}
