import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { RoutePoliciesValidator } from './route-policies.validator';
import { RoutePolicyInterceptor } from './route-policy.interceptor';

/**
 * `@Bulkhead`, `@CircuitBreaker` and `@CallSignal` for a company's controllers. Needs the
 * lanes (BulkheadModule) and breakers (CircuitBreakerModule), both global.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [RoutePolicyInterceptor, RoutePoliciesValidator],
  exports: [RoutePolicyInterceptor],
})
export class RoutePoliciesModule {}
