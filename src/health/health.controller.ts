import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { ResilienceError } from '../common';
import { WithoutTenant } from '../common/nest';
import { LifecycleIndicator } from './readiness.indicator';
import { RedisIndicator } from './redis.indicator';

@Controller('health')
@WithoutTenant()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly lifecycle: LifecycleIndicator,
    private readonly redis: RedisIndicator,
  ) {}

  /** The process answers: depends on nothing else, so a store outage never restarts pods. */
  @Get('live')
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  /** Ready for traffic: 503 from the moment shutdown starts, and while a configured Redis is unreachable. */
  @Get('ready')
  @HealthCheck()
  async ready(): Promise<HealthCheckResult> {
    try {
      const checks = [() => this.lifecycle.check()];
      if (this.redis.configured) checks.push(() => this.redis.check());
      return await this.health.check(checks);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      throw new ResilienceError(
        'unavailable',
        `not ready: ${describeFailures(error.getResponse() as HealthCheckResult)}`,
      );
    }
  }
}

function describeFailures(result: HealthCheckResult): string {
  const failures = Object.entries(result.error ?? {}).map(([key, value]) =>
    typeof value?.message === 'string' ? `${key} (${value.message})` : key,
  );
  return failures.join(', ') || 'a check failed';
}
