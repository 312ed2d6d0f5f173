// The public entry a company's Nest app imports (package.json "exports"). Everything a host
// needs is here; anything not exported is internal and may change.

// Before anything else loads: a clear error on a Node too old for the dependencies.
import './supported-node';

// One import for everything, and its options.
export { BulkheadModule, BULKHEAD_OPTIONS } from './bulkhead.module';
export type {
  BulkheadConfigInput,
  BulkheadModuleAsyncOptions,
  BulkheadModuleExtras,
  BulkheadModuleOptions,
  BulkheadRoutes,
  CustomStores,
  ResolvedBulkheadOptions,
} from './bulkhead-module.options';

// Each feature module alone, with its own options slice.
export { AuthModule, type AuthModuleOptions, type AuthModuleExtras } from './auth';
export { BudgetModule, type BudgetModuleOptions } from './budget';
export { LanesModule, type LanesModuleOptions, type LaneSettings } from './bulkhead';
export { CircuitBreakerModule, type CircuitBreakerModuleOptions } from './circuit-breaker';
export { CommonModule, type ModuleExtras } from './common/nest';
export { ContainmentModule, type ContainmentModuleOptions } from './containment';
export { DispatchModule, type DispatchModuleOptions } from './dispatch';
export { McpPinningModule, type McpPinningModuleOptions, ToolPins } from './mcp-pinning';
export { EventsModule, EventsRoutesModule } from './events';
export { HealthModule } from './health';
export {
  LifecycleModule,
  type LifecycleModuleOptions,
  installProcessSafetyNet,
  type ProcessSafetyNetOptions,
  ProcessShutdown,
  type ProcessShutdownOptions,
  type UnhandledRejectionPolicy,
} from './lifecycle';
export {
  type ChatAnswer,
  type ChatChunk,
  type ChatCompletion,
  type ChatRequest,
  type LlmCallOptions,
  type LlmChunkStream,
  LlmGateway,
  LlmModule,
  type LlmModuleOptions,
  type LlmProvider,
  type ProviderAttempt,
} from './llm';
export { LoggingModule } from './logging';
export { McpModule, type McpModuleOptions } from './mcp';
export { MetricsModule, type MetricsModuleOptions } from './metrics';
export { OpenApiModule, type OpenApiModuleOptions } from './openapi';
export { OverloadModule, type OverloadModuleOptions, type OverloadOptions } from './overload';
export { RateLimitModule, type RateLimitModuleOptions } from './rate-limit';
export { RoutePoliciesModule } from './route-policies';
export {
  StoreModule,
  type StoreModuleOptions,
  sharedStoreProvider,
  type StoreMakers,
  type RedisStoreBase,
} from './store';
export { IdempotencyModule, type IdempotencyModuleOptions } from './idempotency';

// Decorators for an app's controllers and providers.
export { Bulkhead, CallSignal, CircuitBreaker, type BulkheadRouteOptions } from './route-policies';
export { Tool, type ToolOptions, type ToolContext, type ToolArguments, type ToolInputSchema } from './dispatch';
export { WithoutTenant } from './common/nest';

// Identity and the tenant's outbound HTTP.
export { TenantResolver, ApiKeyTenantResolver, type Caller } from './auth';
export type { PlatformName, PlatformRequest } from './common/nest';
export { TenantHttpClient, type ToolHttp } from './containment';

// Mechanisms an app may inject or build on.
export { LaneRegistry, Lane, type LaneSnapshot } from './bulkhead';
export {
  BreakerRegistry,
  Breaker,
  type BreakerSettings,
  type CircuitSnapshot,
  type CircuitState,
} from './circuit-breaker';
export { MetricsRegistry } from './metrics';
export { EventLedger, type LedgerEvent } from './events';
export { CLOCK, type Clock, SystemClock, RANDOM, type Random, sleep } from './common';
export { FakeClock } from './common/fake-clock';

// Store interfaces (each with its injection token of the same name) and their implementations.
export { IdempotencyStore, MemoryIdempotencyStore, RedisIdempotencyStore } from './idempotency';
export { ContainmentStore, MemoryContainmentStore, RedisContainmentStore } from './containment';
export {
  RateLimitStore,
  MemoryRateLimitStore,
  RedisRateLimitStore,
  type BucketRule,
  type RateLimitDecision,
} from './rate-limit';
export { BudgetStore, MemoryBudgetStore, RedisBudgetStore } from './budget';
export {
  ToolPinStore,
  MemoryToolPinStore,
  RedisToolPinStore,
  type PinRecord,
  type PinVerdict,
  type PinApproval,
  type PinView,
} from './mcp-pinning';
export { LlmCacheStore, MemoryLlmCacheStore, RedisLlmCacheStore } from './llm';
export { createRedisConnection, REDIS, type RedisClient, type RedisConnectionOptions } from './store';

// The OpenAPI document of the service's routes (served at /openapi.json, shown at /docs).
export { buildOpenApiDocument, OPENAPI_DOCUMENT, type OpenApiDocument } from './openapi';

// The service's JSON logger (pino behind Nest's LoggerService), for an app that wants the same lines.
export {
  createServiceLogger,
  type ServiceLoggerOptions,
  PinoLoggerService,
  logFormatFrom,
  type LogFormat,
  logLevelsUpTo,
} from './logging';
export { type CallLogLine, callLogLevel } from './common';

// Errors and the envelope every failure is answered with.
export { ResilienceError, isResilienceError, toEnvelope, type ErrorKind } from './common';
// Bodies nested past 64 levels refused before any route: for a host app's own Fastify instance.
export { limitJsonDepth } from './common/nest';
export { EnvelopeExceptionFilter } from './common/nest';

// The YAML config, for an app that wants the service's file format.
export {
  bulkheadConfig,
  bulkheadConfigOf,
  type BulkheadConfig,
  type BulkheadConfigType,
  BULKHEAD_CONFIG_NAMESPACE,
  ConfigError,
  validateConfig,
} from './config';
