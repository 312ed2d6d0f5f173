import type { Breaker, BreakerRegistry, BreakerSettings } from '../circuit-breaker';
import { type Clock, EVERYONE, UNCONTAINED } from '../common';
import {
  DEFAULT_RETRY,
  DEFAULT_RETRY_BUDGET,
  RetryBudget,
  type RetryBudgetSettings,
  RetryPolicy,
  type RetrySettings,
} from '../retry';

/** What a config entry or `@Tool` options may say about retries and the breaker. */
export interface ToolResilienceSettings {
  retry?: Partial<RetrySettings> & { budget?: Partial<RetryBudgetSettings> };
  breaker?: Partial<BreakerSettings>;
}

/** A tool's retry policy, retry budget and breaker: the fields of its definition of those names. */
export interface ToolResilience {
  readonly retry: RetryPolicy;
  readonly retryBudget: RetryBudget;
  readonly breaker: Breaker;
}

/**
 * Makes tools' retry policies, retry budgets and breakers: the built-in defaults (for the
 * breaker, `breakers.default` first), then the `@Tool` options, then the config entry. The
 * breaker is seen by those who may call the tool: not by contained callers when it is
 * `containment: deny`.
 */
export class ToolResilienceFactory {
  constructor(
    private readonly breakers: BreakerRegistry,
    private readonly clock: Clock,
  ) {}

  /** Tool `id`'s, its breaker registered under its id; a setting the primitives refuse throws, naming the tool. */
  of(
    id: string,
    timeoutMs: number,
    containment: 'allow' | 'deny',
    config?: ToolResilienceSettings,
    options?: ToolResilienceSettings,
  ): ToolResilience {
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
}

/** `value` without its undefined fields, so spreading it over defaults keeps them. */
function defined<T extends object>(value: T | undefined): Partial<T> {
  if (!value) return {};
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}
