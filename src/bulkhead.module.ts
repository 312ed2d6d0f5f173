import { type DynamicModule, Logger, Module, type Provider } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AuthModule } from './auth';
import { BudgetModule } from './budget';
import { LanesModule } from './bulkhead';
import type {
  BulkheadModuleAsyncOptions,
  BulkheadModuleExtras,
  BulkheadModuleOptions,
  BulkheadRoutes,
  ResolvedBulkheadOptions,
} from './bulkhead-module.options';
import { ChaosModule } from './chaos';
import { CircuitBreakerModule } from './circuit-breaker';
import { CommonModule, EnvelopeExceptionFilter } from './common/nest';
import { type BulkheadConfig, ConfigError, validateConfig } from './config';
import type { ToolChaosConfig } from './dispatch';
import { ContainmentModule } from './containment';
import { DispatchModule } from './dispatch';
import { EventsModule, EventsRoutesModule } from './events';
import { HealthModule } from './health';
import { IdempotencyModule } from './idempotency';
import { LifecycleModule } from './lifecycle';
import { LlmModule } from './llm';
import { LoggingModule } from './logging';
import { McpModule } from './mcp';
import { McpPinningModule } from './mcp-pinning';
import { MetricsModule } from './metrics';
import { OpenApiModule } from './openapi';
import { OverloadModule } from './overload';
import { RateLimitModule } from './rate-limit';
import { RoutePoliciesModule } from './route-policies';
import { StoreModule } from './store';

/** Injection token of the validated {@link ResolvedBulkheadOptions}. */
export const BULKHEAD_OPTIONS = Symbol('BULKHEAD_OPTIONS');

/** Holds the options once, for every feature module's slice. */
@Module({})
class BulkheadOptionsModule {}

/**
 * Everything in one import: lanes and `@Bulkhead`, breakers and `@CircuitBreaker`, tools and
 * `@Tool`, identity, containment and its two HTTP pools (`TenantHttpClient`), rate limits,
 * budgets, the stores, metrics, health, the drain on shutdown, failure rehearsal (chaos) and
 * the tools over MCP (`/mcp`).
 * Each feature module is imported with its own slice of the options and can also be imported
 * alone.
 *
 * ```ts
 * BulkheadModule.forRoot({ lanes: { render: { concurrency: 4, queueCapacity: 8 } } })
 * BulkheadModule.forRootAsync({ inject: [ConfigService], useFactory: (config) => config.get('bulkhead') })
 * ```
 */
@Module({})
export class BulkheadModule {
  static forRoot(options: BulkheadModuleOptions & BulkheadModuleExtras): DynamicModule {
    const { isGlobal, routes, tenantResolver, errorEnvelope, imports, ...rest } = options;
    return this.forRootAsync({ isGlobal, routes, tenantResolver, errorEnvelope, imports, useFactory: () => rest });
  }

  static forRootAsync(options: BulkheadModuleAsyncOptions): DynamicModule {
    const optionsModule: DynamicModule = {
      module: BulkheadOptionsModule,
      imports: options.imports ?? [],
      providers: [
        {
          provide: BULKHEAD_OPTIONS,
          useFactory: async (...args: unknown[]) => resolveOptions(await options.useFactory(...args)),
          inject: options.inject ?? [],
        },
      ],
      exports: [BULKHEAD_OPTIONS],
    };
    const slice = <T>(pick: (config: BulkheadConfig, resolved: ResolvedBulkheadOptions) => T) => ({
      imports: [optionsModule],
      inject: [BULKHEAD_OPTIONS],
      useFactory: (resolved: ResolvedBulkheadOptions) => pick(resolved.config, resolved),
    });
    const routes = routeSwitches(options.routes);
    const modules = [
      CommonModule,
      EventsModule,
      LoggingModule,
      AuthModule.forRootAsync({
        ...slice((config) => config.auth),
        imports: [optionsModule, ...(options.imports ?? [])],
        tenantResolver: options.tenantResolver,
      }),
      StoreModule.forRootAsync(slice((config, { redis }) => ({ store: config.store, redis }))),
      // Global: the attempt runner and the LLM routes find it without importing it.
      ChaosModule.forRootAsync(slice((config) => ({ enabled: config.chaos.enabled, tools: toolChaos(config) }))),
      LanesModule.forRootAsync({
        ...slice((config) => ({ lanes: config.lanes, priority: config.priority })),
        routes: routes.lanes,
      }),
      // Global: every path's admission (tools, LLM routes, @Bulkhead routes) asks its guard.
      OverloadModule.forRootAsync(slice((config) => ({ overload: config.overload }))),
      CircuitBreakerModule.forRootAsync({
        ...slice((config) => ({ breakers: config.breakers })),
        routes: routes.circuits,
      }),
      ContainmentModule.forRootAsync({
        ...slice((config, { stores }) => ({
          containment: config.containment,
          tenants: keyTenants(config),
          customStore: stores?.containment,
        })),
        routes: routes.admin,
      }),
      RateLimitModule.forRootAsync(
        slice((config, { stores }) => ({ rateLimits: config.rateLimits, customStore: stores?.rateLimit })),
      ),
      BudgetModule.forRootAsync({
        ...slice((config, { stores }) => ({ budgets: config.budgets, customStore: stores?.budget })),
        routes: routes.admin,
      }),
      IdempotencyModule.forRootAsync(
        slice((config, { stores }) => ({ idempotency: config.idempotency, customStore: stores?.idempotency })),
      ),
      // Before the registry, which hands its pins to the mcp tool kind.
      McpPinningModule.forRootAsync({
        ...slice((_config, { stores }) => ({ customStore: stores?.toolPins })),
        routes: routes.admin,
      }),
      DispatchModule.forRootAsync({
        ...slice((config) => ({
          tools: config.tools,
          audit: config.audit,
          toolAccess: config.toolAccess,
        })),
        routes: routes.tools,
      }),
      LlmModule.forRootAsync({
        ...slice((config, { stores }) => ({
          llm: config.llm,
          budgeted: hasBudgets(config),
          customCacheStore: stores?.llmCache,
        })),
        routes: routes.llm,
      }),
      McpModule.forRootAsync({ ...slice((config) => ({ mcp: config.mcp })), routes: routes.mcp }),
      RoutePoliciesModule,
      LifecycleModule.forRootAsync(
        slice((config) => ({
          shutdownDrainMs: config.server.shutdownDrainMs,
          onUnhandledRejection: config.server.onUnhandledRejection,
        })),
      ),
      MetricsModule.forRootAsync({
        ...slice((config) => ({
          tenants: labelTenants(config),
          port: config.server.metricsPort,
          host: config.server.host,
        })),
        routes: routes.metrics,
      }),
      ...(routes.events ? [EventsRoutesModule] : []),
      ...(routes.health ? [HealthModule] : []),
      ...(routes.docs
        ? [
            OpenApiModule.forRootAsync(
              slice((config) => ({ mounted: mountedRoutes(routes), allowAnonymous: config.auth.allowAnonymous })),
            ),
          ]
        : []),
    ];
    return {
      module: BulkheadModule,
      global: options.isGlobal ?? true,
      imports: modules,
      exports: modules,
      providers: [
        ...(options.errorEnvelope === false ? [] : [{ provide: APP_FILTER, useClass: EnvelopeExceptionFilter }]),
        mountedRoutesReport(routes),
      ],
    };
  }
}

/** Validates the options as the config file would be; every problem at once. */
function resolveOptions(options: BulkheadModuleOptions): ResolvedBulkheadOptions {
  const { redis, stores, ...document } = options;
  const result = validateConfig(document);
  if (!result.ok) throw new ConfigError('BulkheadModule options', result.problems);
  return { config: result.config, redis, stores };
}

function routeSwitches(routes: boolean | BulkheadRoutes | undefined): Required<BulkheadRoutes> {
  const all = routes !== false;
  const some = typeof routes === 'object' ? routes : {};
  return {
    tools: some.tools ?? all,
    llm: some.llm ?? all,
    mcp: some.mcp ?? all,
    lanes: some.lanes ?? all,
    circuits: some.circuits ?? all,
    events: some.events ?? all,
    admin: some.admin ?? all,
    metrics: some.metrics ?? all,
    health: some.health ?? all,
    docs: some.docs ?? all,
  };
}

/** Says at start-up (debug) which of Bulkhead's own route groups are mounted and which were left out. */
function mountedRoutesReport(routes: Required<BulkheadRoutes>): Provider {
  return {
    provide: Symbol('BULKHEAD_MOUNTED_ROUTES'),
    useFactory: () => ({
      onApplicationBootstrap: () => new Logger('Bulkhead').debug(describeMountedRoutes(routes)),
    }),
  };
}

/** `Bulkhead's own routes: tools, llm, ... mounted; docs left out (routes.docs: false)`. */
function describeMountedRoutes(routes: Required<BulkheadRoutes>): string {
  const groups = Object.keys(routes) as Array<keyof BulkheadRoutes>;
  const mounted = groups.filter((group) => routes[group]);
  const left = groups.filter((group) => !routes[group]);
  const mountedText = mounted.length > 0 ? `${mounted.join(', ')} mounted` : 'none mounted';
  const leftText =
    left.length > 0 ? `; left out: ${left.map((group) => `${group} (routes.${group}: false)`).join(', ')}` : '';
  return `Bulkhead's own routes: ${mountedText}${leftText}`;
}

/** The route groups the OpenAPI document shows: those mounted. */
function mountedRoutes(routes: Required<BulkheadRoutes>): Omit<Required<BulkheadRoutes>, 'docs'> {
  const { docs: _docs, ...mounted } = routes;
  return mounted;
}

/** The tools' chaos settings by id: only those that have some. */
function toolChaos(config: BulkheadConfig): Record<string, ToolChaosConfig> {
  const settings: Record<string, ToolChaosConfig> = {};
  for (const [toolId, tool] of Object.entries(config.tools)) if (tool.chaos) settings[toolId] = tool.chaos;
  return settings;
}

/** Whether any tenant has a USD budget: every LLM target must then be priced. */
function hasBudgets(config: BulkheadConfig): boolean {
  return config.budgets.defaultUsd !== undefined || Object.keys(config.budgets.tenants).length > 0;
}

/** The API keys' tenants: vouched for, so they start in the normal pool. */
function keyTenants(config: BulkheadConfig): string[] {
  return [...new Set(config.auth.apiKeys.map((key) => key.tenant))];
}

/** Every tenant the config names: these, and only these, are metric labels. */
function labelTenants(config: BulkheadConfig): string[] {
  const named = [
    ...keyTenants(config),
    ...Object.keys(config.rateLimits.tenants),
    ...Object.keys(config.budgets.tenants),
  ];
  return [...new Set(named)];
}
