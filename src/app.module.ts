import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { BulkheadModule } from './bulkhead';
import { CircuitBreakerModule } from './circuit-breaker';
import { CommonModule, EnvelopeExceptionFilter } from './common/nest';
import { BudgetModule } from './budget';
import { ContainmentModule } from './containment';
import { type BulkheadConfig, ConfigModule } from './config';
import { DispatchModule } from './dispatch';
import { EventsModule } from './events';
import { ExampleModule } from './example/example.module';
import { HealthModule } from './health';
import { LifecycleModule } from './lifecycle';
import { MetricsModule } from './metrics';
import { RateLimitModule } from './rate-limit';
import { RoutePoliciesModule } from './route-policies';
import { StoreModule } from './store';

/** The whole service, built from a validated config. */
@Module({})
export class AppModule {
  static forRoot(config: BulkheadConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        CommonModule,
        EventsModule,
        LifecycleModule,
        BulkheadModule.forRoot({ lanes: config.lanes }),
        StoreModule,
        ContainmentModule,
        RateLimitModule,
        BudgetModule,
        CircuitBreakerModule.forRoot({ breakers: config.breakers }),
        RoutePoliciesModule,
        DispatchModule.forRoot({ tools: config.tools, idempotency: config.idempotency }),
        MetricsModule,
        HealthModule,
        ...(config.examples ? [ExampleModule] : []),
      ],
      providers: [{ provide: APP_FILTER, useClass: EnvelopeExceptionFilter }],
    };
  }
}
