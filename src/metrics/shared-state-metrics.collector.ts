import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { Counter } from 'prom-client';
import { BudgetGate, microsToUsd } from '../budget';
import { METRICS_MODULE_OPTIONS, type MetricsModuleOptions } from './metrics.module-definition';
import { RateLimiter } from '../rate-limit';
import { METRIC } from './metric-names';
import { MetricsRegistry } from './metrics-registry.provider';

/**
 * Rate limiting and budget spend by tenant, read when Prometheus scrapes. Only configured
 * tenants are labels; everyone else (`anonymous` too) is `other`, so cardinality stays bounded.
 */
@Injectable()
export class SharedStateMetricsCollector implements OnModuleInit {
  constructor(
    @Optional() @Inject(RateLimiter) private readonly limiter: RateLimiter | null,
    @Optional() @Inject(BudgetGate) private readonly budget: BudgetGate | null,
    private readonly registry: MetricsRegistry,
    @Inject(METRICS_MODULE_OPTIONS) private readonly options: MetricsModuleOptions,
  ) {}

  onModuleInit(): void {
    const { limiter, budget } = this;
    const tenants = new Set(this.options.tenants ?? []);
    const label = (tenant: string) => (tenants.has(tenant) ? tenant : 'other');
    const registers = [this.registry];
    if (limiter) {
      new Counter({
        name: METRIC.rateLimited,
        help: 'Calls over their tenant rate limit (refused, or only counted when rateLimits.enforce is false)',
        labelNames: ['tenant'],
        registers,
        collect() {
          this.reset();
          for (const [tenant, count] of limiter.counts.limited) this.inc({ tenant: label(tenant) }, count);
        },
      });
      new Counter({
        name: METRIC.rateLimitFailedOpen,
        help: 'Calls let through without a rate limit decision because the store was down (failMode open)',
        registers,
        collect() {
          this.reset();
          this.inc(limiter.counts.failedOpen);
        },
      });
    }
    if (budget) {
      new Counter({
        name: METRIC.budgetSpent,
        help: 'USD charged to tenant budgets',
        labelNames: ['tenant'],
        registers,
        collect() {
          this.reset();
          for (const [tenant, micros] of budget.spentMicros) this.inc({ tenant: label(tenant) }, microsToUsd(micros));
        },
      });
    }
  }
}
