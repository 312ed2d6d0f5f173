import type { ModuleMetadata, Type } from '@nestjs/common';
import type { RedisClient } from './store';
import type { z } from 'zod';
import type { TenantResolver } from './auth';
import type { BudgetStore } from './budget';
import type { BulkheadConfig, configSchema } from './config';
import type { ContainmentStore } from './containment';
import type { IdempotencyStore } from './idempotency';
import type { LlmCacheStore } from './llm';
import type { ToolPinStore } from './mcp-pinning';
import type { RateLimitStore } from './rate-limit';

/** Store implementations of an app's own, each in place of the memory or Redis one. */
export interface CustomStores {
  idempotency?: IdempotencyStore;
  containment?: ContainmentStore;
  rateLimit?: RateLimitStore;
  budget?: BudgetStore;
  llmCache?: LlmCacheStore;
  /** The pins of upstream MCP tools' definitions. */
  toolPins?: ToolPinStore;
}

/**
 * Everything BulkheadModule configures, in the shape of the service's YAML file
 * (docs/configuration.md): `lanes` (required), `tools`, `breakers`, `auth`, `containment`,
 * `store`, `rateLimits`, `budgets`, `idempotency`, `server.shutdownDrainMs`, `chaos`. Validated at start
 * like the file, with the same defaults; a problem stops the app with one line each
 * (`chaos.enabled: true` too, unless `BULKHEAD_ALLOW_CHAOS=true` is in `process.env`).
 */
export type BulkheadConfigInput = z.input<typeof configSchema>;

export interface BulkheadModuleOptions extends BulkheadConfigInput {
  /**
   * An ioredis client of the app's own for the shared state (rate limits, budgets, idempotency,
   * containment), instead of connecting to `store.url`. Made with `enableOfflineQueue: false`
   * and a short `commandTimeout`, or an outage holds decisions instead of failing them.
   */
  redis?: RedisClient;
  /** The app's own implementation of any store interface, in place of memory or Redis. */
  stores?: CustomStores;
}

/** Which of the service's own routes are mounted; each true unless set false. */
export interface BulkheadRoutes {
  /** `POST /v1/tools/{id}/invoke`, `POST /v1/tools/batch`. */
  tools?: boolean;
  /** `POST /v1/chat/completions`, `POST /v1/messages` (and its `count_tokens`), `POST /v1/responses`, `GET /v1/models`. */
  llm?: boolean;
  /** `/mcp` (POST, GET, DELETE): the tools over the Model Context Protocol. */
  mcp?: boolean;
  /** `GET /v1/lanes`. */
  lanes?: boolean;
  /** `GET /v1/circuits`, and the operators' `POST /v1/admin/circuits/:name/open|close`. */
  circuits?: boolean;
  /** `GET /v1/events`. */
  events?: boolean;
  /** `/v1/admin/...`: containment, budgets and MCP tool pins (404 anyway without `auth.adminToken`); the circuits' go with `circuits`. */
  admin?: boolean;
  /** `GET /metrics`. */
  metrics?: boolean;
  /** `GET /health/live`, `GET /health/ready`. */
  health?: boolean;
  /** `GET /openapi.json` and its page, `GET /docs` (of the routes mounted). */
  docs?: boolean;
}

/** What is fixed when the module is imported, beside options that may come from a factory. */
export interface BulkheadModuleExtras {
  /** Its providers (TenantHttpClient, LaneRegistry, ...) can be injected anywhere in the app. @default true */
  isGlobal?: boolean;
  /** The service's own routes: all (true), none (false), or some. @default true */
  routes?: boolean | BulkheadRoutes;
  /**
   * The app's own identity instead of Bulkhead's API keys: a class Nest builds, which may
   * inject the providers of `imports`.
   */
  tenantResolver?: Type<TenantResolver>;
  /** Modules whose providers the options factory and the `tenantResolver` inject. */
  imports?: ModuleMetadata['imports'];
  /**
   * Every failure of every route answers with Bulkhead's error envelope (a global exception
   * filter). False: the app maps `ResilienceError` itself (its `status` and `toEnvelope`).
   * @default true
   */
  errorEnvelope?: boolean;
}

export interface BulkheadModuleAsyncOptions extends BulkheadModuleExtras {
  // Nest's own factory signature: any injections, in `inject` order.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  useFactory: (...args: any[]) => BulkheadModuleOptions | Promise<BulkheadModuleOptions>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  inject?: any[];
}

/** The options once validated: the config with every default, and the code-only parts. */
export interface ResolvedBulkheadOptions {
  config: BulkheadConfig;
  redis?: RedisClient;
  stores?: CustomStores;
}
