import { Module } from '@nestjs/common';
import { CommonModule } from '../common/nest';
import { McpController } from './mcp.controller';
import { McpOriginGuard } from './mcp-origin.guard';
import { McpConfigurableModule } from './mcp.module-definition';
import { McpSessions } from './mcp-sessions.service';
import { McpToolCalls } from './mcp-tool-calls.service';

/**
 * `/mcp`: the trusted registry served as a Model Context Protocol server over Streamable HTTP,
 * every `tools/call` through the call pipeline. `McpModule.forRoot({ mcp: { maxSessions, ... } })`;
 * it needs DispatchModule (the registry and the pipeline) and, for tenants, the containment
 * guard, both global in BulkheadModule; `routes: false` (BulkheadModule's `routes.mcp`) leaves `/mcp` out.
 */
@Module({
  imports: [CommonModule],
  providers: [McpToolCalls, McpSessions, McpOriginGuard],
  exports: [McpSessions],
})
export class McpModule extends McpConfigurableModule {
  static readonly routes = [McpController];
}
