import { Inject, Injectable, Optional } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import type { RedisClient } from '../store';
import { REDIS } from '../store';

/**
 * Down while a configured Redis is not connected: decisions that need it would fail (budgets
 * refuse, containment isolates), so this replica should get no traffic. Reads the connection's
 * state only: a probe does no I/O. Liveness never depends on it.
 */
@Injectable()
export class RedisIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    @Optional() @Inject(REDIS) private readonly redis: RedisClient | null,
  ) {}

  get configured(): boolean {
    return this.redis != null;
  }

  check(): HealthIndicatorResult {
    const session = this.indicators.check('redis');
    if (!this.redis) return session.up();
    return this.redis.status === 'ready' ? session.up() : session.down({ message: `redis ${this.redis.status}` });
  }
}
