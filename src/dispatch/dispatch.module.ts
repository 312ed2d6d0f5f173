import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { CLOCK, type Clock } from '../common';
import { AttemptRunner } from './attempt-runner';
import { BatchRunner } from './batch/batch-runner.service';
import { CallExecutor } from './call-executor';
import { CallPipeline } from './call-pipeline.service';
import {
  DISPATCH_MODULE_OPTIONS,
  DispatchConfigurableModule,
  type DispatchModuleOptions,
} from './dispatch.module-definition';
import { IdempotencyService, IdempotencyStore, MemoryIdempotencyStore } from './idempotency';
import { ToolRegistry } from './tool-registry.service';
import { ToolsController } from './tools.controller';

/** The trusted tool registry, the call pipeline, and the tool routes. */
@Module({
  imports: [DiscoveryModule],
  controllers: [ToolsController],
  providers: [
    ToolRegistry,
    CallPipeline,
    CallExecutor,
    AttemptRunner,
    IdempotencyService,
    BatchRunner,
    {
      provide: IdempotencyStore,
      useFactory: (options: DispatchModuleOptions, clock: Clock) =>
        new MemoryIdempotencyStore(clock, options.idempotency.maxEntries),
      inject: [DISPATCH_MODULE_OPTIONS, CLOCK],
    },
  ],
  exports: [ToolRegistry, CallPipeline, CallExecutor],
})
export class DispatchModule extends DispatchConfigurableModule {}
