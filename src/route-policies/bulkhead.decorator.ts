import { attachInterceptorOnce } from './attach-interceptor';
import { RoutePolicyInterceptor } from './route-policy.interceptor';
import { BulkheadMetadata, type BulkheadRouteOptions } from './bulkhead.metadata';

/**
 * Runs a controller's routes in a lane of the config: at most `concurrency` at once, at most
 * `queueCapacity` waiting, and the rest refused at once with `queue_full` and `Retry-After`.
 * On a class it covers every route; on a method it overrides the class. A request whose
 * client disconnects while waiting leaves the queue at once; see {@link CallSignal} for the
 * handler's side.
 */
export function Bulkhead(lane: string, options: BulkheadRouteOptions = {}): ClassDecorator & MethodDecorator {
  const metadata = BulkheadMetadata({ lane, ...options });
  return ((target: object, key?: string | symbol, descriptor?: TypedPropertyDescriptor<unknown>) => {
    if (descriptor) metadata(target, key!, descriptor);
    else (metadata as ClassDecorator)(target as never);
    attachInterceptorOnce(RoutePolicyInterceptor, target, descriptor);
  }) as ClassDecorator & MethodDecorator;
}
