import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { Counter } from 'prom-client';
import { BudgetGate, microsToUsd } from '../budget';
import { BULKHEAD_CONFIG, type BulkheadConfig } from '../config';
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
    private readonly limiter: RateLimiter,
    private readonly budget: BudgetGate,
    private readonly registry: MetricsRegistry,
    @Inject(BULKHEAD_CONFIG) private readonly config: BulkheadConfig,
  ) {}

  onModuleInit(): void {
    const { limiter, budget } = this;
    const tenants = new Set(this.config.auth.apiKeys.map((key) => key.tenant));
    const label = (tenant: string) => (tenants.has(tenant) ? tenant : 'other');
    const registers = [this.registry];
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
