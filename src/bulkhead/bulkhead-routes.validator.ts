import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { BulkheadMetadata } from './bulkhead.metadata';
import { LaneRegistry } from './lane-registry.service';

/** Refuses to start when a `@Bulkhead` route names a lane the config does not have, or a bad queue TTL. */
@Injectable()
export class BulkheadRoutesValidator implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly lanes: LaneRegistry,
  ) {}

  onApplicationBootstrap(): void {
    for (const wrapper of this.discovery.getControllers()) {
      const controller = wrapper.metatype as (new (...args: never[]) => object) | null;
      if (!controller) continue;
      for (const name of this.scanner.getAllMethodNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, (...args: unknown[]) => unknown>)[name];
        const route = this.reflector.getAllAndOverride(BulkheadMetadata, [handler, controller]);
        if (!route) continue;
        const where = `@Bulkhead('${route.lane}') on ${controller.name}.${name}`;
        if (!this.lanes.get(route.lane)) {
          throw new Error(`${where}: the config has no lane '${route.lane}' (lanes: ${this.lanes.names().join(', ')})`);
        }
        const { queueTtlMs } = route;
        if (queueTtlMs !== undefined && !(queueTtlMs > 0 && Number.isFinite(queueTtlMs))) {
          throw new Error(`${where}: queueTtlMs must be a positive number of milliseconds`);
        }
      }
    }
  }
}
