import { type BeforeApplicationShutdown, Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { LaneRegistry } from '../bulkhead';
import { BreakerRegistry } from '../circuit-breaker';
import { CLOCK, type Clock, NAME_PATTERN, ResilienceError } from '../common';
import { Lifecycle } from '../lifecycle';
import { DISPATCH_MODULE_OPTIONS, type DispatchModuleOptions } from './dispatch.module-definition';
import type { ToolDefinition } from './tool';
import { ToolAccess, type ToolAccessRule } from './tool-access';
import { TOOL_KINDS } from './tool-kinds.provider';
import { ToolKindSet } from './tool-kind-set';
import { findToolMethods } from './tool-methods';
import { buildToolSet } from './tool-set';
import type { ToolKind } from './tools/tool-kind';

/**
 * The trusted tool registry: tools from the config file (each entry built by its kind: see
 * `tools/tool-kinds.ts`) and `@Tool` provider methods, built once at start-up and then fixed.
 * Nothing a caller or a model says can add a tool or a lane. What may change after start-up is
 * what an upstream MCP server says of its own tools (description, input schema), and whether
 * such a tool is quarantined by its pin: {@link onChange}. Which of them a tenant may see and
 * call is `toolAccess`'s ({@link requireFor}).
 */
@Injectable()
export class ToolRegistry implements OnModuleInit, BeforeApplicationShutdown {
  private tools: ReadonlyMap<string, ToolDefinition> = new Map();
  private readonly kinds: ToolKindSet;
  private readonly access: ToolAccess;
  private changes = 0;
  private listeners: Array<() => void> = [];

  constructor(
    @Inject(DISPATCH_MODULE_OPTIONS) private readonly options: DispatchModuleOptions,
    private readonly lanes: LaneRegistry,
    private readonly breakers: BreakerRegistry,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Inject(TOOL_KINDS) kinds: readonly ToolKind[],
    // Optional: an app without the drain closes the upstream sessions at once.
    @Optional() @Inject(Lifecycle) private readonly lifecycle: Lifecycle | null,
  ) {
    this.kinds = new ToolKindSet(kinds);
    this.access = new ToolAccess(options.toolAccess);
  }

  async onModuleInit(): Promise<void> {
    try {
      const methods = findToolMethods(this.discovery, this.scanner);
      const entries = Object.entries(this.options.tools ?? {});
      await this.kinds.prepare(entries);
      this.tools = buildToolSet({
        entries,
        kinds: this.kinds,
        methods,
        lanes: this.lanes,
        breakers: this.breakers,
        clock: this.clock,
      });
      await this.kinds.start();
    } catch (error) {
      // The app will not start: what the kinds opened (sessions to list the servers) ends with it.
      await this.kinds.close();
      throw error;
    }
    this.kinds.onChange(() => this.changed());
  }

  /** What the kinds hold (upstream MCP sessions) ends after the drain (their calls finish first), before the pools close. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.lifecycle?.drain();
    await this.kinds.close();
  }

  /** Goes up by one whenever what the registry shows of its tools changes (an upstream's listing). */
  get revision(): number {
    return this.changes;
  }

  /** Calls `listener` when what the registry shows of its tools changes; returns its remover. */
  onChange(listener: () => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((item) => item !== listener);
    };
  }

  get(id: string): ToolDefinition | undefined {
    return this.tools.get(id);
  }

  /** The tool `id`, or `not_found`; the id is echoed only when it could be a tool's name (it is caller input). */
  require(id: unknown): ToolDefinition {
    const tool = typeof id === 'string' ? this.tools.get(id) : undefined;
    if (tool) return tool;
    throw unknownTool(id);
  }

  /**
   * The tool `id` as `tenant` may call it (`toolAccess`): a tool it may not call is `not_found`,
   * the very answer for a tool that does not exist, so a refusal tells it nothing.
   */
  requireFor(id: unknown, tenant: string): ToolDefinition {
    const tool = typeof id === 'string' ? this.tools.get(id) : undefined;
    if (tool && this.access.allows(tenant, tool.id)) return tool;
    throw unknownTool(id);
  }

  /**
   * The tools a caller may be shown: every tool but an upstream MCP tool quarantined because its
   * definition changed (its calls are refused `tool_changed`; `get` and `require` still find it).
   */
  list(): ToolDefinition[] {
    const listed: ToolDefinition[] = [];
    for (const tool of this.tools.values()) if (this.kinds.listed(tool.id, tool.kind)) listed.push(tool);
    return listed;
  }

  /** The rule of `toolAccess` that `tenant` is held to: one object per rule, to keep what it lists by. */
  accessRuleOf(tenant: string): ToolAccessRule {
    return this.access.ruleOf(tenant);
  }

  private changed(): void {
    this.changes++;
    for (const listener of this.listeners) listener();
  }
}

/** The answer for a tool that does not exist, or that the caller may not call. */
function unknownTool(id: unknown): ResilienceError {
  const named = typeof id === 'string' && NAME_PATTERN.test(id) ? ` '${id}'` : '';
  return new ResilienceError('not_found', `unknown tool${named}`);
}
