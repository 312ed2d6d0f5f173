import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { Lifecycle } from '../lifecycle';

/** Down from the moment shutdown starts, so load balancers stop sending traffic. */
@Injectable()
export class LifecycleIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly lifecycle: Lifecycle,
  ) {}

  check(): HealthIndicatorResult {
    const session = this.indicators.check('lifecycle');
    return this.lifecycle.draining ? session.down({ message: 'shutting down' }) : session.up();
  }
}
