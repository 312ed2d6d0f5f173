import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { LaneRegistry } from '../bulkhead';
import { BreakerRegistry, type BreakerSettings } from '../circuit-breaker';
import { CLOCK, type Clock, ResilienceError } from '../common';
import { type CodeToolConfig, NAME_PATTERN, type ToolConfig } from '../config';
import { DISPATCH_MODULE_OPTIONS, type DispatchModuleOptions } from './dispatch.module-definition';
import { DEFAULT_RETRY_BUDGET, RetryBudget, type RetryBudgetSettings } from './retry/retry-budget';
import { DEFAULT_RETRY, RetryPolicy, type RetrySettings } from './retry/retry-policy';
import type { ToolArguments, ToolDefinition, ToolHandler, ToolInputSchema } from './tool';
import { ToolMetadata, type ToolRegistration } from './tool.decorator';
import { compileInputCheck } from './tool-input-check';
import { DELAY_INPUT_SCHEMA, delay, validateDelay } from './tools/delay.tool';
import { echo } from './tools/echo.tool';
import { httpTool } from './tools/http.tool';

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
 * The trusted tool registry: tools from the config file and `@Tool` provider methods, built
 * once at start-up and frozen. Nothing a caller or a model says can add a tool or a lane.
 */
@Injectable()
export class ToolRegistry implements OnModuleInit {
  private tools: ReadonlyMap<string, ToolDefinition> = new Map();

  constructor(
    @Inject(DISPATCH_MODULE_OPTIONS) private readonly options: DispatchModuleOptions,
    private readonly lanes: LaneRegistry,
    private readonly breakers: BreakerRegistry,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  onModuleInit(): void {
    const registrations = this.findToolMethods();
    const tools = new Map<string, ToolDefinition>();
    for (const [id, config] of Object.entries(this.options.tools ?? {})) {
      tools.set(id, this.fromConfig(id, config, registrations.get(id)));
    }
    for (const [id, registration] of registrations) {
      if (!tools.has(id)) tools.set(id, this.fromRegistration(registration));
    }
    for (const tool of tools.values()) {
      if (!this.lanes.get(tool.lane)) {
        throw new Error(
          `tool '${tool.id}': the config has no lane '${tool.lane}' (lanes: ${this.lanes.names().join(', ')})`,
        );
      }
    }
    this.tools = tools;
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

  private fromConfig(id: string, config: ToolConfig, registration: Registered | undefined): ToolDefinition {
    if (config.kind === 'code') {
      if (!registration) throw new Error(`tool '${id}' is of kind code, but no provider has a @Tool('${id}') method`);
      return this.fromRegistration(registration, config);
    }
    if (registration) throw new Error(`tool '${id}' is both a ${config.kind} tool in the config and a @Tool method`);
    const common = {
      id,
      kind: config.kind,
      lane: config.lane,
      description: config.description,
      timeoutMs: config.timeoutMs,
      idempotent: config.idempotent,
      containment: config.containment,
      costUsd: config.costUsd ?? 0,
      tokens: config.tokens ?? 0,
      ...this.resilience(id, config.timeoutMs, config),
    };
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

  /** A `@Tool` method; a config entry of kind `code` overrides what it sets. */
  private fromRegistration({ options, handler }: Registered, config?: CodeToolConfig): ToolDefinition {
    const timeoutMs = config?.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return Object.freeze({
      id: options.id,
      kind: 'code' as const,
      lane: config?.lane ?? options.lane,
      description: config?.description ?? options.description,
      timeoutMs,
      idempotent: config?.idempotent ?? options.idempotent ?? false,
      containment: config?.containment ?? options.containment ?? 'allow',
      costUsd: config?.costUsd ?? options.costUsd ?? 0,
      tokens: config?.tokens ?? options.tokens ?? 0,
      validate: inputChecks(options.id, options.inputSchema, options.validate),
      inputSchema: options.inputSchema,
      handler: jsonResult(options.id, handler),
      ...this.resilience(options.id, timeoutMs, config, options),
    });
  }

  /**
   * The tool's retry policy, retry budget and breaker: the built-in defaults (for the breaker,
   * `breakers.default` first), then the `@Tool` options, then the config entry.
   */
  private resilience(id: string, timeoutMs: number, config?: ToolResilience, options?: ToolResilience) {
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
        breaker: this.breakers.register(id, { ...defined(options?.breaker), ...defined(config?.breaker) }),
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
