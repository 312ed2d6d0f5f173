import { attachInterceptorOnce } from './attach-interceptor';
import { CircuitBreakerMetadata } from './circuit-breaker.metadata';
import { RoutePolicyInterceptor } from './route-policy.interceptor';

/**
 * Guards a controller's routes with the breaker `name`: once too many of them fail because
 * their dependency does (a ResilienceError `transient` or `timeout`, or an HttpException 502,
 * 503 or 504), they answer `circuit_open` at once, with Retry-After, without running, until
 * one probe succeeds. Routes that name the same breaker share it; so does a tool of that name.
 * Settings come from `breakers.<name>` of the config, else `breakers.default`. On a class it
 * covers every route; on a method it overrides the class. With `@Bulkhead` it runs inside
 * the lane slot, in the same single interceptor.
 */
export function CircuitBreaker(name: string): ClassDecorator & MethodDecorator {
  const metadata = CircuitBreakerMetadata(name);
  return ((target: object, key?: string | symbol, descriptor?: TypedPropertyDescriptor<unknown>) => {
    if (descriptor) metadata(target, key!, descriptor);
    else (metadata as ClassDecorator)(target as never);
    attachInterceptorOnce(RoutePolicyInterceptor, target, descriptor);
  }) as ClassDecorator & MethodDecorator;
}
