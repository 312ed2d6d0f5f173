import { Module } from '@nestjs/common';
import { AdminGuard } from '../auth';
import { CLOCK, type Clock } from '../common';
import { CommonModule } from '../common/nest';
import { sharedStoreProvider } from '../store';
import { MemoryToolPinStore } from './memory-tool-pin.store';
import {
  MCP_PINNING_MODULE_OPTIONS,
  McpPinningConfigurableModule,
  type McpPinningModuleOptions,
} from './mcp-pinning.module-definition';
import { McpToolsAdminController } from './mcp-tools-admin.controller';
import { RedisToolPinStore } from './redis-tool-pin.store';
import { ToolPinEventsRecorder } from './tool-pin-events.recorder';
import { ToolPinStore } from './tool-pin.store';
import { ToolPins } from './tool-pins';

/**
 * The pins of upstream MCP tools' definitions (`ToolPins`, which the mcp tool kind feeds) and
 * `GET|POST /v1/admin/mcp/tools/{name}[/approve]`; the ToolPinStore is in Redis when StoreModule
 * holds a connection, so every replica compares with the same pins, in memory otherwise.
 */
@Module({
  imports: [CommonModule],
  providers: [
    sharedStoreProvider<ToolPinStore, McpPinningModuleOptions>(ToolPinStore, MCP_PINNING_MODULE_OPTIONS, {
      own: (options) => options.customStore,
      memory: () => new MemoryToolPinStore(),
      redis: ({ connection, keys }) => new RedisToolPinStore(connection, keys),
    }),
    {
      provide: ToolPins,
      useFactory: (store: ToolPinStore, clock: Clock) => new ToolPins(store, clock),
      inject: [ToolPinStore, CLOCK],
    },
    ToolPinEventsRecorder,
    AdminGuard,
  ],
  exports: [ToolPinStore, ToolPins],
})
export class McpPinningModule extends McpPinningConfigurableModule {
  static readonly routes = [McpToolsAdminController];
}
