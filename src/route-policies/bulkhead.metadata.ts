import { Reflector } from '@nestjs/core';
import type { PriorityClass } from '../bulkhead';

export interface BulkheadRouteOptions {
  /** How long a request may wait for a slot, if shorter than the lane's `queueTtlMs`. */
  queueTtlMs?: number;
  /** The class of the route's calls in the lane, unless a caller asks for another (`X-Bulkhead-Priority`). @default 'standard' */
  priorityClass?: PriorityClass;
}

export interface BulkheadRoute extends BulkheadRouteOptions {
  lane: string;
}

/** The route metadata behind `@Bulkhead`; read it with `reflector.getAllAndOverride`. */
export const BulkheadMetadata = Reflector.createDecorator<BulkheadRoute>();
