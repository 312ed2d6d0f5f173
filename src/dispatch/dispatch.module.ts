import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AgentOutboundHttp } from './agent-outbound-http';
import { AttemptRunner } from './attempt-runner';
import { CallPipeline } from './call-pipeline.service';
import { DispatchConfigurableModule } from './dispatch.module-definition';
import { OutboundHttp } from './outbound-http';
import { ToolRegistry } from './tool-registry.service';
import { ToolsController } from './tools.controller';

/** The trusted tool registry, the call pipeline, and the tool routes. */
@Module({
  imports: [DiscoveryModule],
  controllers: [ToolsController],
  providers: [ToolRegistry, CallPipeline, AttemptRunner, { provide: OutboundHttp, useClass: AgentOutboundHttp }],
  exports: [ToolRegistry, CallPipeline, OutboundHttp],
})
export class DispatchModule extends DispatchConfigurableModule {}
