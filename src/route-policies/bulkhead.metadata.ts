import { Reflector } from '@nestjs/core';

export interface BulkheadRouteOptions {
  /** How long a request may wait for a slot, if shorter than the lane's `queueTtlMs`. */
  queueTtlMs?: number;
}

export interface BulkheadRoute extends BulkheadRouteOptions {
  lane: string;
}

/** The route metadata behind `@Bulkhead`; read it with `reflector.getAllAndOverride`. */
export const BulkheadMetadata = Reflector.createDecorator<BulkheadRoute>();
