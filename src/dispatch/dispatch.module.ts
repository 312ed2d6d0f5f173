import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { CommonModule } from '../common/nest';
import { EventsModule } from '../events';
import { CallAdmission } from './admission/call-admission';
import { jointCallAdmissionProvider } from './admission/joint-call-admission.provider';
import { AttemptRunner } from './attempt-runner';
import { BatchRunner } from './batch/batch-runner.service';
import { CallExecutor } from './call-executor';
import { CallPipeline } from './call-pipeline.service';
import { DispatchConfigurableModule } from './dispatch.module-definition';
import { toolKindsProvider } from './tool-kinds.provider';
import { ToolRegistry } from './tool-registry.service';
import { ToolsController } from './tools.controller';

/**
 * The trusted tool registry (config tools and `@Tool` methods), the call pipeline, and the
 * tool routes. It runs calls through the lanes, breakers, rate limits, budgets, containment
 * and idempotency of the modules beside it (LanesModule, CircuitBreakerModule, RateLimitModule,
 * BudgetModule, ContainmentModule, IdempotencyModule), which it expects to be imported, global, in
 * the same app: BulkheadModule brings them all.
 */
@Module({
  imports: [DiscoveryModule, CommonModule, EventsModule],
  providers: [
    toolKindsProvider,
    ToolRegistry,
    CallPipeline,
    CallAdmission,
    jointCallAdmissionProvider,
    CallExecutor,
    AttemptRunner,
    BatchRunner,
  ],
  exports: [ToolRegistry, CallPipeline, CallExecutor],
})
export class DispatchModule extends DispatchConfigurableModule {
  static readonly routes = [ToolsController];
}
