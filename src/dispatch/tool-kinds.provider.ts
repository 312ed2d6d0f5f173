import { Logger, type Provider } from '@nestjs/common';
import { CLOCK, type Clock } from '../common';
import { HttpPools } from '../containment';
import { ToolPins } from '../mcp-pinning';
import { toolKinds } from './tools/tool-kinds';

/** Injection token of the registry's tool kinds (`ToolKind[]`): {@link toolKinds}, made for this app. */
export const TOOL_KINDS = Symbol('TOOL_KINDS');

export const toolKindsProvider: Provider = {
  provide: TOOL_KINDS,
  useFactory: (clock: Clock, pools: HttpPools, pins: ToolPins | undefined) =>
    // An app without McpPinningModule pins in this process only.
    toolKinds({ clock, pools, logger: new Logger('Bulkhead'), pins: pins ?? undefined }),
  inject: [CLOCK, HttpPools, { token: ToolPins, optional: true }],
};
