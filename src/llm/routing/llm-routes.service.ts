import { Inject, Injectable, Optional } from '@nestjs/common';
import { LaneRegistry } from '../../bulkhead';
import { ChaosRegistry } from '../../chaos';
import { BreakerRegistry } from '../../circuit-breaker';
import { CLOCK, type Clock } from '../../common';
import type { LlmRouteConfig } from '../../config';
import { RetryPolicy } from '../../dispatch';
import { routeCacheScope } from '../cache';
import { LLM_MODULE_OPTIONS, type LlmModuleOptions } from '../llm.module-definition';
import { PriceTable } from '../pricing';
import { createProvider } from '../providers';
import { HedgeAllowance, TargetHealth } from './hedging';
import type { LlmRoute, LlmTarget } from './llm-route';

/**
 * The routes of `llm.routes`, built once at start-up: each target's provider (wrapped in its
 * chaos when chaos is on and the target has some), breaker (`llm.<route>.<index>`) and price.
 * Start-up fails, naming the key, when a route's lane does not exist or a target has no price
 * while budgets are configured (its spend could not be held).
 */
@Injectable()
export class LlmRoutes {
  private readonly routes = new Map<string, LlmRoute>();

  constructor(
    @Inject(LLM_MODULE_OPTIONS) options: LlmModuleOptions,
    lanes: LaneRegistry,
    breakers: BreakerRegistry,
    @Inject(CLOCK) clock: Clock,
    @Optional() @Inject(ChaosRegistry) chaos?: ChaosRegistry | null,
  ) {
    const prices = new PriceTable(options.llm.prices);
    for (const [name, config] of Object.entries(options.llm.routes)) {
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
        const provider = createProvider(target, clock);
        return {
          label,
          target: {
            provider: target.provider,
            model: target.model,
            baseUrl: target.baseUrl,
            apiKey: target.apiKey,
            region: target.region,
          },
          provider: chaos
            ? chaos.llmProvider(provider, { route: name, label, lane: config.lane }, target.chaos)
            : provider,
          breaker: breakers.register(`llm.${name}.${index}`, config.breaker),
          price,
          timeoutMs: target.timeoutMs ?? config.timeoutMs,
          config: target,
          health: new TargetHealth(),
        };
      });
      this.routes.set(name, route(name, config, targets));
    }
  }

  get(name: string): LlmRoute | undefined {
    return this.routes.get(name);
  }

  names(): string[] {
    return [...this.routes.keys()];
  }
}

function route(name: string, config: LlmRouteConfig, targets: LlmTarget[]): LlmRoute {
  return {
    name,
    lane: config.lane,
    targets,
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
