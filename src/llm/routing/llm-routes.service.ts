import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { LaneRegistry } from '../../bulkhead';
import { BreakerRegistry } from '../../circuit-breaker';
import { CLOCK, type Clock, ResilienceError, tenantsOf } from '../../common';
import type { LlmRouteConfig, LlmTargetConfig } from '../llm.options';
import { RetryBudget, retryBudgetSettings, RetryPolicy } from '../../retry';
import { routeCacheScope } from '../cache';
import { LLM_MODULE_OPTIONS, type LlmModuleOptions } from '../llm.module-definition';
import { contextWindowOf, PriceTable } from '../pricing';
import { createProvider, LlmProviderWrappers } from '../providers';
import { HedgeAllowance, TargetHealth } from './hedging';
import type { LlmRoute, LlmTarget } from './llm-route';
import { TargetLoad } from './target-load';
import { readsLoad } from './target-strategy';

/**
 * The routes of `llm.routes`, built once at start-up: each target's provider (wrapped in its
 * chaos when chaos is on and the target has some, through LlmProviderWrappers), breaker (`llm.<route>.<index>`) and price.
 * Start-up fails, naming the key, when a route's lane does not exist or a target has no price
 * while budgets are configured (its spend could not be held).
 *
 * A route with `tenants` exists only for those tenants: to any other caller it is a route that
 * does not exist, and the error names only the routes that caller may use.
 */
@Injectable()
export class LlmRoutes {
  private readonly routes = new Map<string, LlmRoute>();
  /** The tenants of each route that has a list; a route without one is every caller's. */
  private readonly allowed = new Map<string, ReadonlySet<string>>();
  /** When the routes were built (epoch ms): the age `GET /v1/models` gives them. */
  readonly loadedAt: number;

  constructor(
    @Inject(LLM_MODULE_OPTIONS) options: LlmModuleOptions,
    lanes: LaneRegistry,
    breakers: BreakerRegistry,
    @Inject(CLOCK) clock: Clock,
    @Optional() @Inject(LlmProviderWrappers) wrappers?: LlmProviderWrappers | null,
  ) {
    this.loadedAt = clock.wallNow();
    const prices = new PriceTable(options.llm.prices);
    for (const [name, config] of Object.entries(options.llm.routes)) {
      // Its breakers, and what chaos injects into its targets, are seen by those who may use it.
      const audience = tenantsOf(config.tenants);
      lanes.usedBy(config.lane, audience);
      if (!lanes.get(config.lane)) {
        throw new Error(`llm.routes.${name}.lane: unknown lane '${config.lane}' (lanes: ${lanes.names().join(', ')})`);
      }
      const targets = config.targets.map((target, index): LlmTarget => {
        const label = `${target.provider}/${target.model}`;
        const price = prices.priceOf(target.provider, target.model);
        if (!price && options.budgeted) {
          throw new Error(
            `llm.routes.${name}.targets.${index}: no price for ${label}, and budgets are configured: ` +
              `set llm.prices['${label}']`,
          );
        }
        warnOfMissingKey(`llm.routes.${name}.targets.${index}`, target);
        const provider = createProvider(target, clock);
        return {
          label,
          target: {
            provider: target.provider,
            model: target.model,
            baseUrl: target.baseUrl,
            apiKey: target.apiKey,
            region: target.region,
            maxTokensField: target.maxTokensField,
            reasoning: target.reasoning,
            responsesApi: target.responsesApi,
          },
          provider: wrappers
            ? wrappers.wrap(provider, { route: name, label, lane: config.lane, config: target, audience })
            : provider,
          breaker: breakers.register(`llm.${name}.${index}`, config.breaker, audience),
          price,
          timeoutMs: target.timeoutMs ?? config.timeoutMs,
          config: target,
          health: new TargetHealth(),
          priority: target.priority ?? 0,
          weight: target.weight ?? 1,
          contextWindow: contextWindowOf(target.provider, target.model, target.contextWindow),
          load: new TargetLoad(readsLoad(config.strategy)),
          retryBudget: new RetryBudget(retryBudgetSettings(config.retry.budget), clock),
        };
      });
      this.routes.set(name, route(name, config, targets));
      if (config.tenants) this.allowed.set(name, new Set(config.tenants));
    }
  }

  /** The route `name`, whoever asks. */
  get(name: string): LlmRoute | undefined {
    return this.routes.get(name);
  }

  /** Every route's name, whoever may use it: not for a caller's eyes ({@link unknownRouteError}). */
  names(): string[] {
    return [...this.routes.keys()];
  }

  /**
   * The route `name` if `tenant` may use it; undefined alike for a route that does not exist and
   * for one the tenant may not use, so that a caller cannot tell them apart.
   */
  forTenant(name: string, tenant: string): LlmRoute | undefined {
    const route = this.routes.get(name);
    return route && this.mayUse(name, tenant) ? route : undefined;
  }

  /** The routes `tenant` may use, in the config's order. */
  usableBy(tenant: string): string[] {
    return this.names().filter((name) => this.mayUse(name, tenant));
  }

  /** The answer to a `model` that names no route `tenant` may use: it lists only those it may. */
  unknownRouteError(tenant: string): ResilienceError {
    const usable = this.usableBy(tenant);
    const which = usable.length === 0 ? 'this tenant may use none' : `routes: ${usable.join(', ')}`;
    return new ResilienceError('not_found', `no LLM route of that name (${which})`);
  }

  private mayUse(name: string, tenant: string): boolean {
    return this.allowed.get(name)?.has(tenant) ?? true;
  }
}

function route(name: string, config: LlmRouteConfig, configured: LlmTarget[]): LlmRoute {
  const { targets, groups } = priorityGroups(configured);
  return {
    name,
    lane: config.lane,
    targets,
    groups,
    strategy: config.strategy,
    priorityClass: config.priorityClass ?? 'standard',
    ...contextWindowBounds(targets),
    retry: new RetryPolicy({ ...config.retry, deadlineMs: config.deadlineMs }),
    deadlineMs: config.deadlineMs,
    maxOutputTokens: config.maxOutputTokens,
    hedgeAfterMs: config.hedgeAfterMs,
    maxHedges: config.maxHedges,
    hedges: new HedgeAllowance(),
    firstByteTimeoutMs: config.firstByteTimeoutMs,
    idleTimeoutMs: config.idleTimeoutMs,
    cache: config.cache,
    semanticCache: config.semanticCache,
    cacheScope: routeCacheScope(name, { targets: config.targets, maxOutputTokens: config.maxOutputTokens }),
  };
}

/** `targets` by priority, lowest first, the config's order kept inside each (a stable sort), and cut into groups. */
export function priorityGroups(targets: readonly LlmTarget[]): { targets: LlmTarget[]; groups: LlmTarget[][] } {
  const sorted = [...targets].sort((a, b) => a.priority - b.priority);
  const groups: LlmTarget[][] = [];
  for (const target of sorted) {
    const last = groups.at(-1);
    if (last && last[0].priority === target.priority) last.push(target);
    else groups.push([target]);
  }
  return { targets: sorted, groups };
}

/** The largest and smallest context windows of `targets`, an unknown window counted as unbounded. */
export function contextWindowBounds(targets: readonly LlmTarget[]): {
  largestContextWindow: number;
  smallestContextWindow: number;
} {
  let largest = 0;
  let smallest = Infinity;
  for (const { contextWindow = Infinity } of targets) {
    largest = Math.max(largest, contextWindow);
    smallest = Math.min(smallest, contextWindow);
  }
  return { largestContextWindow: largest, smallestContextWindow: smallest };
}

/** The public APIs that refuse every request without a key. */
const KEYED_APIS: Partial<Record<LlmTargetConfig['provider'], string>> = {
  openai: 'api.openai.com',
  anthropic: 'api.anthropic.com',
};

/**
 * A target on a provider's public API without a key: every request to it would fail at the
 * provider, most often because `apiKey: ${VAR}` names a variable that is not set (which leaves
 * the key out). Said at start-up, naming the target; a target with a `baseUrl` elsewhere (a
 * local OpenAI-compatible server) may need no key, so it is not warned about.
 */
function warnOfMissingKey(at: string, target: LlmTargetConfig): void {
  const api = KEYED_APIS[target.provider];
  if (!api || target.apiKey !== undefined) return;
  if (target.baseUrl !== undefined && new URL(target.baseUrl).host !== api) return;
  new Logger('Bulkhead').warn(
    `${at} (${target.provider}/${target.model}) has no apiKey, and ${api} refuses requests without one: ` +
      'set it (an apiKey of ${VAR} whose variable is not set is left out)',
  );
}
