import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { CLOCK, type Clock } from '../common';
import { CONTAINMENT_MODULE_OPTIONS, type ContainmentModuleOptions } from './containment.module-definition';
import type { PoolName } from './containment-decision';
import { EgressPolicy } from './egress';
import { HttpPool } from './http-pool';

/** The two outbound pools, `normal` and `isolated`, built from the config and closed after the drain. */
@Injectable()
export class HttpPools implements OnApplicationShutdown {
  readonly normal: HttpPool;
  readonly isolated: HttpPool;

  constructor(@Inject(CONTAINMENT_MODULE_OPTIONS) options: ContainmentModuleOptions, @Inject(CLOCK) clock: Clock) {
    const { pools, egress } = options.containment;
    const policy = new EgressPolicy(egress);
    const common = { timeoutMs: pools.timeoutMs, pooledConnectionLifetimeMs: pools.pooledConnectionLifetimeMs };
    this.normal = new HttpPool(
      { name: 'normal', maxConcurrency: pools.normalMaxConcurrency, ...common },
      policy,
      clock,
    );
    this.isolated = new HttpPool(
      { name: 'isolated', maxConcurrency: pools.isolatedMaxConcurrency, ...common },
      policy,
      clock,
    );
  }

  get(name: PoolName): HttpPool {
    return name === 'normal' ? this.normal : this.isolated;
  }

  all(): HttpPool[] {
    return [this.normal, this.isolated];
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.all().map((pool) => pool.close()));
  }
}
