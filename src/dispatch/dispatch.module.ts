import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AttemptRunner } from './attempt-runner';
import { BatchRunner } from './batch/batch-runner.service';
import { CallExecutor } from './call-executor';
import { CallPipeline } from './call-pipeline.service';
import { DispatchConfigurableModule } from './dispatch.module-definition';
import { IdempotencyService } from './idempotency';
import { ToolRegistry } from './tool-registry.service';
import { ToolsController } from './tools.controller';

/** The trusted tool registry, the call pipeline, and the tool routes. */
@Module({
  imports: [DiscoveryModule],
  controllers: [ToolsController],
  providers: [ToolRegistry, CallPipeline, CallExecutor, AttemptRunner, IdempotencyService, BatchRunner],
  exports: [ToolRegistry, CallPipeline, CallExecutor],
})
export class DispatchModule extends DispatchConfigurableModule {}
