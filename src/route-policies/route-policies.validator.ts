import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { LaneRegistry } from '../bulkhead';
import { BreakerRegistry } from '../circuit-breaker';
import { EVERYONE, NAME_PATTERN } from '../common';
import { BulkheadMetadata } from './bulkhead.metadata';
import { CircuitBreakerMetadata } from './circuit-breaker.metadata';

/**
 * At start-up: refuses a `@Bulkhead` route that names a lane the config does not have or a bad
 * queue TTL, and creates the breaker of every `@CircuitBreaker` name, so that metrics and
 * `GET /v1/circuits` know it before its first call.
 */
@Injectable()
export class RoutePoliciesValidator implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    // Optional, so an app may use one decorator without the other's module; a route that
    // needs a missing one is refused below, by name.
    @Optional() @Inject(LaneRegistry) private readonly lanes: LaneRegistry | null,
    @Optional() @Inject(BreakerRegistry) private readonly breakers: BreakerRegistry | null,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getControllers()) {
      const controller = wrapper.metatype as (new (...args: never[]) => object) | null;
      if (!controller) continue;
      for (const name of this.scanner.getAllMethodNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, (...args: unknown[]) => unknown>)[name];
        const where = `${controller.name}.${name}`;
        this.checkLane(this.reflector.getAllAndOverride(BulkheadMetadata, [handler, controller]), where);
        const breaker = this.reflector.getAllAndOverride(CircuitBreakerMetadata, [handler, controller]);
        if (breaker !== undefined) this.registerBreaker(breaker, where);
      }
    }
  }

  private checkLane(route: { lane: string; queueTtlMs?: number } | undefined, where: string): void {
    if (!route) return;
    const decorator = `@Bulkhead('${route.lane}') on ${where}`;
    if (!this.lanes) throw new Error(`${decorator}: import LanesModule (or BulkheadModule) into the app for its lanes`);
    // A decorated route serves every tenant: so may its lane's counts.
    this.lanes.usedBy(route.lane, EVERYONE);
    if (!this.lanes.get(route.lane)) {
      throw new Error(`${decorator}: the config has no lane '${route.lane}' (lanes: ${this.lanes.names().join(', ')})`);
    }
    const { queueTtlMs } = route;
    if (queueTtlMs !== undefined && !(queueTtlMs > 0 && Number.isFinite(queueTtlMs))) {
      throw new Error(`${decorator}: queueTtlMs must be a positive number of milliseconds`);
    }
  }

  private registerBreaker(name: string, where: string): void {
    if (!NAME_PATTERN.test(name) || name === 'default') {
      throw new Error(
        `@CircuitBreaker('${name}') on ${where}: a breaker name is 1-64 letters, digits, "_", "-" or ".", and not 'default'`,
      );
    }
    if (!this.breakers) {
      throw new Error(
        `@CircuitBreaker('${name}') on ${where}: import CircuitBreakerModule (or BulkheadModule) into the app`,
      );
    }
    this.breakers.register(name);
  }
}
