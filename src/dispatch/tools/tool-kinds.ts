import type { Clock } from '../../common';
import type { PoolSource } from '../../mcp-client';
import { MemoryToolPinStore, ToolPins } from '../../mcp-pinning';
import { builtinToolKind } from './builtin/builtin.kind';
import { codeToolKind } from './code/code.kind';
import { httpToolKind } from './http/http.kind';
import { type KindLogger, McpToolKind } from './mcp/mcp.kind';
import type { ToolKind } from './tool-kind';

/** What a kind may need for the app's lifetime. */
export interface ToolKindDeps {
  /** The containment pools (an upstream MCP server's sessions go through them). */
  readonly pools: PoolSource;
  readonly clock: Clock;
  readonly logger: KindLogger;
  /** The pins of upstream MCP tools' definitions; pins held in this process only when absent. */
  readonly pins?: ToolPins;
}

/**
 * Every kind of tool the config may name, made once per app (a kind may hold what lives as long
 * as the app: the mcp kind's upstream sessions). The one list a new kind joins, besides its
 * folder beside these (its entry schema there, `<kind>.options.ts`) and that schema's place in
 * `TOOL_SCHEMAS` (tool-schemas.ts), which the config reads before any app exists.
 */
export function toolKinds(deps: ToolKindDeps): ToolKind[] {
  return [
    httpToolKind,
    builtinToolKind,
    codeToolKind,
    new McpToolKind(
      deps.pools,
      deps.clock,
      deps.logger,
      deps.pins ?? new ToolPins(new MemoryToolPinStore(), deps.clock),
    ),
  ];
}
