import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { CommonModule } from '../common/nest';
import { EventsModule } from '../events';
import { RoutePoliciesValidator } from './route-policies.validator';
import { RoutePolicyInterceptor } from './route-policy.interceptor';

/**
 * `@Bulkhead`, `@CircuitBreaker` and `@CallSignal` for an app's controllers. The lanes come
 * from LanesModule and the breakers from CircuitBreakerModule, imported in the same app; a
 * route whose decorator needs one that is missing stops the app at start, naming the route.
 */
@Global()
@Module({
  imports: [DiscoveryModule, CommonModule, EventsModule],
  providers: [RoutePolicyInterceptor, RoutePoliciesValidator],
  exports: [RoutePolicyInterceptor],
})
export class RoutePoliciesModule {}
