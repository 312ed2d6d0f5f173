import { Module } from '@nestjs/common';
import { AdminGuard } from '../auth';
import { CommonModule } from '../common/nest';
import { EventsModule } from '../events';
import { BreakerRegistry } from './breaker-registry.service';
import { BreakerTransitionsRecorder } from './breaker-transitions.recorder';
import { CircuitBreakerConfigurableModule } from './circuit-breaker.module-definition';
import { CircuitsAdminController, CircuitsController } from './circuits.controller';

/**
 * Breakers by name, `GET /v1/circuits` and the operators' open/close routes (which answer 404
 * unless an admin token is configured through AuthModule): `CircuitBreakerModule.forRoot({ breakers })`.
 */
@Module({
  imports: [CommonModule, EventsModule],
  providers: [BreakerRegistry, BreakerTransitionsRecorder, AdminGuard],
  exports: [BreakerRegistry],
})
export class CircuitBreakerModule extends CircuitBreakerConfigurableModule {
  static readonly routes = [CircuitsController, CircuitsAdminController];
}
