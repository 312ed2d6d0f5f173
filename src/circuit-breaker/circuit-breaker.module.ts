import { Module } from '@nestjs/common';
import { AdminGuard } from '../auth';
import { BreakerRegistry } from './breaker-registry.service';
import { BreakerTransitionsRecorder } from './breaker-transitions.recorder';
import { CircuitBreakerConfigurableModule } from './circuit-breaker.module-definition';
import { CircuitsAdminController, CircuitsController } from './circuits.controller';

/**
 * Breakers by name, `GET /v1/circuits` and the operators' open/close routes. Import it with
 * `CircuitBreakerModule.forRoot({ breakers })`; global unless `isGlobal: false`.
 */
@Module({
  controllers: [CircuitsController, CircuitsAdminController],
  providers: [BreakerRegistry, BreakerTransitionsRecorder, AdminGuard],
  exports: [BreakerRegistry],
})
export class CircuitBreakerModule extends CircuitBreakerConfigurableModule {}
