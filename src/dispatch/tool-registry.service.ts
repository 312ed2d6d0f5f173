import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { LaneRegistry } from '../bulkhead';
import { BreakerRegistry, type BreakerSettings } from '../circuit-breaker';
import { CLOCK, type Clock, EVERYONE, ResilienceError, UNCONTAINED } from '../common';
import { type CodeToolConfig, type McpToolConfig, NAME_PATTERN, type ToolConfig } from '../config';
import { HttpPools } from '../containment';
import { Lifecycle } from '../lifecycle';
import { DISPATCH_MODULE_OPTIONS, type DispatchModuleOptions } from './dispatch.module-definition';
import {
  DEFAULT_RETRY,
  DEFAULT_RETRY_BUDGET,
  RetryBudget,
  type RetryBudgetSettings,
  RetryPolicy,
  type RetrySettings,
} from '../retry';
import type { ToolArguments, ToolDefinition, ToolHandler, ToolInputSchema } from './tool';
import { ToolMetadata, type ToolRegistration } from './tool.decorator';
import { compileInputCheck } from './tool-input-check';
import { DELAY_INPUT_SCHEMA, delay, validateDelay } from './tools/builtin/delay.tool';
import { echo } from './tools/builtin/echo.tool';
import { httpTool } from './tools/http/http.tool';
import { McpToolKind } from './tools/mcp/mcp.kind';

const acceptAnything = (): void => undefined;
const DEFAULT_TIMEOUT_MS = 30_000;

/** What a config entry or `@Tool` options may say about retries and the breaker. */
interface ToolResilience {
  retry?: Partial<RetrySettings> & { budget?: Partial<RetryBudgetSettings> };
  breaker?: Partial<BreakerSettings>;
}

/** `value` without its undefined fields, so spreading it over defaults keeps them. */
function defined<T extends object>(value: T | undefined): Partial<T> {
  if (!value) return {};
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}

/**
 * The trusted tool registry: tools from the config file (upstream MCP servers' listed at
 * start-up) and `@Tool` provider methods, built once at start-up and then fixed. Nothing a
 * caller or a model says can add a tool or a lane. What may change after start-up is what an
 * upstream MCP server says of its own tools (description, input schema): {@link onChange}.
 */
@Injectable()
export class ToolRegistry implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('Bulkhead');
  private tools: ReadonlyMap<string, ToolDefinition> = new Map();
  private readonly mcp: McpToolKind;
  private changes = 0;
  private listeners: Array<() => void> = [];

  constructor(
    @Inject(DISPATCH_MODULE_OPTIONS) private readonly options: DispatchModuleOptions,
    private readonly lanes: LaneRegistry,
    private readonly breakers: BreakerRegistry,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    pools: HttpPools,
    // Optional: an app without the drain closes the upstream sessions at once.
    @Optional() @Inject(Lifecycle) private readonly lifecycle: Lifecycle | null,
  ) {
    this.mcp = new McpToolKind(pools, clock, this.logger);
  }

  async onModuleInit(): Promise<void> {
    try {
      this.tools = await this.build();
    } catch (error) {
      // The app will not start: the sessions opened to list the servers end with it.
      await this.mcp.close();
      throw error;
    }
    this.mcp.onChange(() => this.changed());
  }

  /** Upstream MCP sessions end after the drain (their calls finish first), before the pools close. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.lifecycle?.drain();
    await this.mcp.close();
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
    const named = typeof id === 'string' && NAME_PATTERN.test(id) ? ` '${id}'` : '';
    throw new ResilienceError('not_found', `unknown tool${named}`);
  }

  list(): ToolDefinition[] {
    return [...this.tools.values()];
  }

  /** Every tool: the config's (upstream MCP servers listed first), then the `@Tool` methods it does not name. */
  private async build(): Promise<ReadonlyMap<string, ToolDefinition>> {
    const registrations = this.findToolMethods();
    const entries = Object.entries(this.options.tools ?? {});
    await this.mcp.discover(entries);
    const tools = new Map<string, ToolDefinition>();
    for (const [id, config] of entries) {
      if (config.kind !== 'mcp') {
        if (tools.has(id)) throw new Error(`tool '${id}' of the config is also imported from an MCP server`);
        tools.set(id, this.fromConfig(id, config, registrations.get(id)));
        continue;
      }
      for (const [toolId, upstreamName] of this.mcp.toolsOf(id, config)) {
        if (registrations.has(toolId) || tools.has(toolId)) {
          throw new Error(
            `tool '${toolId}' of tools.${id} is also ${registrations.has(toolId) ? 'a @Tool method' : 'in the config'}`,
          );
        }
        tools.set(toolId, this.fromMcp(id, toolId, upstreamName, config));
      }
    }
    for (const [id, registration] of registrations) {
      if (!tools.has(id)) tools.set(id, this.fromRegistration(registration));
    }
    for (const tool of tools.values()) {
      // Its lane's counts are its callers' traffic: seen by those who may call it.
      this.lanes.usedBy(tool.lane, tool.containment === 'deny' ? UNCONTAINED : EVERYONE);
      if (!this.lanes.get(tool.lane)) {
        throw new Error(
          `tool '${tool.id}': the config has no lane '${tool.lane}' (lanes: ${this.lanes.names().join(', ')})`,
        );
      }
    }
    return tools;
  }

  private fromConfig(
    id: string,
    config: Exclude<ToolConfig, McpToolConfig>,
    registration: Registered | undefined,
  ): ToolDefinition {
    if (config.kind === 'code') {
      if (!registration) throw new Error(`tool '${id}' is of kind code, but no provider has a @Tool('${id}') method`);
      return this.fromRegistration(registration, config);
    }
    if (registration) throw new Error(`tool '${id}' is both a ${config.kind} tool in the config and a @Tool method`);
    const common = this.commonOf(id, config);
    if (config.kind === 'http') {
      const schema = config.inputSchema as ToolInputSchema | undefined;
      return Object.freeze({
        ...common,
        validate: schema ? compileInputCheck(id, schema) : acceptAnything,
        inputSchema: schema,
        handler: httpTool(id, config, this.clock) as ToolHandler,
      });
    }
    const delays = config.builtin === 'delay';
    return Object.freeze({
      ...common,
      validate: delays ? validateDelay : acceptAnything,
      inputSchema: delays ? DELAY_INPUT_SCHEMA : undefined,
      handler: (delays ? delay(this.clock) : echo) as ToolHandler,
    });
  }

  /** The upstream tool `upstreamName` of entry `entryId`, registered as `toolId` with the entry's settings. */
  private fromMcp(entryId: string, toolId: string, upstreamName: string, config: McpToolConfig): ToolDefinition {
    // Its description and schema are getters that follow the server's listing: copied, not spread.
    const parts = Object.getOwnPropertyDescriptors(this.mcp.parts(entryId, toolId, upstreamName, config));
    return Object.freeze(Object.defineProperties({ ...this.commonOf(toolId, config) }, parts)) as ToolDefinition;
  }

  /** What every tool of the config has, its breaker (named after it) registered. */
  private commonOf(id: string, config: Exclude<ToolConfig, CodeToolConfig>) {
    return {
      id,
      kind: config.kind,
      lane: config.lane,
      description: config.description,
      timeoutMs: config.timeoutMs,
      idempotent: config.idempotent,
      containment: config.containment,
      costUsd: config.costUsd ?? 0,
      tokens: config.tokens ?? 0,
      ...this.resilience(id, config.timeoutMs, config.containment, config),
    };
  }

  private changed(): void {
    this.changes++;
    for (const listener of this.listeners) listener();
  }

  /** A `@Tool` method; a config entry of kind `code` overrides what it sets. */
  private fromRegistration({ options, handler }: Registered, config?: CodeToolConfig): ToolDefinition {
    const timeoutMs = config?.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const containment = config?.containment ?? options.containment ?? 'allow';
    return Object.freeze({
      id: options.id,
      kind: 'code' as const,
      lane: config?.lane ?? options.lane,
      description: config?.description ?? options.description,
      timeoutMs,
      idempotent: config?.idempotent ?? options.idempotent ?? false,
      containment,
      costUsd: config?.costUsd ?? options.costUsd ?? 0,
      tokens: config?.tokens ?? options.tokens ?? 0,
      validate: inputChecks(options.id, options.inputSchema, options.validate),
      inputSchema: options.inputSchema,
      handler: jsonResult(options.id, handler),
      ...this.resilience(options.id, timeoutMs, containment, config, options),
    });
  }

  /**
   * The tool's retry policy, retry budget and breaker: the built-in defaults (for the breaker,
   * `breakers.default` first), then the `@Tool` options, then the config entry. The breaker is
   * seen by those who may call the tool: not by contained callers when it is `containment: deny`.
   */
  private resilience(
    id: string,
    timeoutMs: number,
    containment: 'allow' | 'deny',
    config?: ToolResilience,
    options?: ToolResilience,
  ) {
    const { budget: optionsBudget, ...optionsRetry } = options?.retry ?? {};
    const { budget: configBudget, ...configRetry } = config?.retry ?? {};
    const settings = { ...DEFAULT_RETRY, ...defined(optionsRetry), ...defined(configRetry) };
    const deadlineMs =
      settings.deadlineMs ?? settings.maxAttempts * timeoutMs + (settings.maxAttempts - 1) * settings.maxDelayMs;
    try {
      return {
        retry: new RetryPolicy({ ...settings, deadlineMs }),
        retryBudget: new RetryBudget(
          { ...DEFAULT_RETRY_BUDGET, ...defined(optionsBudget), ...defined(configBudget) },
          this.clock,
        ),
        breaker: this.breakers.register(
          id,
          { ...defined(options?.breaker), ...defined(config?.breaker) },
          containment === 'deny' ? UNCONTAINED : EVERYONE,
        ),
      };
    } catch (error) {
      throw new Error(`tool '${id}': ${(error as Error).message}`);
    }
  }

  private findToolMethods(): Map<string, Registered> {
    const found = new Map<string, Registered>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      for (const name of this.scanner.getAllMethodNames(Object.getPrototypeOf(instance))) {
        const options = this.discovery.getMetadataByDecorator(ToolMetadata, wrapper, name);
        if (!options) continue;
        const method = instance[name] as ToolHandler;
        const where = `${instance.constructor.name}.${name}`;
        if (!NAME_PATTERN.test(options.id)) {
          throw new Error(`@Tool('${options.id}') on ${where}: a tool id is 1-64 letters, digits, "_", "-" or "."`);
        }
        const { timeoutMs } = options;
        if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs >= 1 && timeoutMs <= 600_000)) {
          throw new Error(`@Tool('${options.id}') on ${where}: timeoutMs must be an integer from 1 to 600000`);
        }
        const earlier = found.get(options.id);
        if (earlier) throw new Error(`@Tool('${options.id}') is on both ${earlier.where} and ${where}`);
        found.set(options.id, { options, handler: method.bind(instance), where });
      }
    }
    return found;
  }
}

/** A code tool's checks: its input schema's, then its own `validate`. */
function inputChecks(
  id: string,
  schema: ToolInputSchema | undefined,
  validate: ((args: ToolArguments) => void) | undefined,
): (args: ToolArguments) => void {
  if (!schema) return validate ?? acceptAnything;
  const matchesSchema = compileInputCheck(id, schema);
  if (!validate) return matchesSchema;
  return (args) => {
    matchesSchema(args);
    validate(args);
  };
}

/**
 * A code tool's result goes to the client as JSON; one that cannot be (a BigInt, a cycle) fails
 * the attempt here, where the call is still accounted for, not later in the response writer.
 */
function jsonResult(id: string, handler: ToolHandler): ToolHandler {
  return async (args, context) => {
    const result = await handler(args, context);
    try {
      JSON.stringify(result);
    } catch {
      throw new ResilienceError('internal', `tool '${id}' answered a result that is not JSON`);
    }
    return result;
  };
}

interface Registered {
  options: ToolRegistration;
  handler: ToolHandler;
  where: string;
}
