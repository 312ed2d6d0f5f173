import type { LaneRegistry } from '../bulkhead';
import type { BreakerRegistry } from '../circuit-breaker';
import { type Clock, EVERYONE, UNCONTAINED } from '../common';
import type { ToolDefinition } from './tool';
import type { ToolKindSet } from './tool-kind-set';
import type { ToolMethod } from './tool-methods';
import { ToolResilienceFactory } from './tool-resilience';
import { methodTool } from './tools/code/method-tool';
import type { ToolKindConfig, ToolKindContext } from './tools/tool-kind';

/** What the tools are built from and registered with. */
export interface ToolSetSources {
  /** The config's entries, in order, each prepared by its kind already. */
  readonly entries: ReadonlyArray<readonly [string, ToolKindConfig]>;
  readonly kinds: ToolKindSet;
  readonly methods: ReadonlyMap<string, ToolMethod>;
  readonly lanes: LaneRegistry;
  readonly breakers: BreakerRegistry;
  readonly clock: Clock;
}

/**
 * Every tool: the config's entries in order, each built by its kind (an entry that imports tools,
 * each of them), then the `@Tool` methods the config does not name. Throws what stops start-up:
 * two tools of one id, an entry of a kind other than `code` named like a `@Tool` method, a tool
 * in a lane the config does not have.
 */
export function buildToolSet({
  entries,
  kinds,
  methods,
  lanes,
  breakers,
  clock,
}: ToolSetSources): ReadonlyMap<string, ToolDefinition> {
  const resilience = new ToolResilienceFactory(breakers, clock);
  const ctx: ToolKindContext = {
    clock,
    toolMethod: (id) => methods.get(id),
    resilience: (id, timeoutMs, containment, config, options) =>
      resilience.of(id, timeoutMs, containment, config, options),
  };
  const tools = new Map<string, ToolDefinition>();
  for (const [id, config] of entries) {
    const kind = kinds.of(id, config);
    if (kind.importedIds) {
      for (const toolId of kind.importedIds(id, config)) {
        if (methods.has(toolId) || tools.has(toolId)) {
          throw new Error(
            `tool '${toolId}' of tools.${id} is also ${methods.has(toolId) ? 'a @Tool method' : 'in the config'}`,
          );
        }
        tools.set(toolId, kind.build(toolId, config, ctx));
      }
      continue;
    }
    if (tools.has(id)) throw new Error(`tool '${id}' of the config is also imported from an MCP server`);
    if (methods.has(id) && !kind.overridesToolMethod) {
      throw new Error(`tool '${id}' is both a ${config.kind} tool in the config and a @Tool method`);
    }
    tools.set(id, kind.build(id, config, ctx));
  }
  for (const [id, method] of methods) {
    if (!tools.has(id)) tools.set(id, methodTool(method, ctx));
  }
  for (const tool of tools.values()) {
    // Its lane's counts are its callers' traffic: seen by those who may call it.
    lanes.usedBy(tool.lane, tool.containment === 'deny' ? UNCONTAINED : EVERYONE);
    if (!lanes.get(tool.lane)) {
      throw new Error(`tool '${tool.id}': the config has no lane '${tool.lane}' (lanes: ${lanes.names().join(', ')})`);
    }
  }
  return tools;
}
