import type { PriorityClass } from '../../bulkhead';
import type { Breaker } from '../../circuit-breaker';
import type { LlmRouteConfig, LlmTargetConfig } from '../llm.options';
import type { RetryBudget, RetryPolicy } from '../../retry';
import type { LlmProvider, ProviderTarget } from '../providers/llm-provider';
import type { Price } from '../pricing';
import type { HedgeAllowance, TargetHealth } from './hedging';
import type { TargetLoad } from './target-load';

/** One target of a route, built once at start-up. */
export interface LlmTarget {
  /** `provider/model`: what `x-bulkhead-served-by` and the metrics call it. */
  readonly label: string;
  readonly target: ProviderTarget;
  readonly provider: LlmProvider;
  /** Named `llm.<route>.<index>`: each target of each route its own. */
  readonly breaker: Breaker;
  /** Undefined for an unpriced target, which the config check keeps away from budgets. */
  readonly price: Price | undefined;
  /** Per attempt. */
  readonly timeoutMs: number;
  readonly config: LlmTargetConfig;
  /** Its recent 429/529s, which keep hedges off it. */
  readonly health: TargetHealth;
  /** Its group: lower is tried first. @default 0 */
  readonly priority: number;
  /** Its share under the `weighted` strategy, against the others of its group. @default 1 */
  readonly weight: number;
  /** Tokens of input and output it holds (config, else the known-model table); undefined when unknown. */
  readonly contextWindow: number | undefined;
  /** Attempts in flight and recent latency, which `least-busy` and `lowest-latency` choose by. */
  readonly load: TargetLoad;
  /**
   * Its retries, bounded as a tool's: a request's first attempt on it is a call, each retry on it
   * spends the budget. Absent (a target built by hand): unbounded.
   */
  readonly retryBudget?: RetryBudget;
}

/** A route of `llm.routes`: what a client names as `model`. */
export interface LlmRoute {
  readonly name: string;
  readonly lane: string;
  /** By priority, then in the config's order. */
  readonly targets: readonly LlmTarget[];
  /** `targets` cut into priority groups, lowest priority first: failover finishes a group before the next. */
  readonly groups: readonly (readonly LlmTarget[])[];
  /** How a target is chosen inside a group (see `TargetStrategy`). */
  readonly strategy: LlmRouteConfig['strategy'];
  /** Its requests' class in their lane when the caller asks for none. */
  readonly priorityClass: PriorityClass;
  /** The largest context window of its targets (Infinity when one is unknown). */
  readonly largestContextWindow: number;
  /** The smallest context window of its targets (Infinity when none is known). */
  readonly smallestContextWindow: number;
  /** Per target. */
  readonly retry: RetryPolicy;
  /** Every attempt and wait of one request, across every target. */
  readonly deadlineMs: number;
  /** Output cap when the client sets none. */
  readonly maxOutputTokens: number;
  /** 0: no hedging; otherwise the wait for an answer before the next healthy target starts too. */
  readonly hedgeAfterMs: number;
  /** Hedges one request may start. */
  readonly maxHedges: number;
  /** The route's share of hedges (10 % of its requests). */
  readonly hedges: HedgeAllowance;
  /** Streamed: the longest wait for a target's first content. */
  readonly firstByteTimeoutMs: number;
  /** Streamed: the longest wait between two chunks after it. */
  readonly idleTimeoutMs: number;
  readonly cache: boolean;
  /** Opt-in: similar questions get a stored answer (llm.cache.semantic). */
  readonly semanticCache: boolean;
  /**
   * What the exact cache keys answers of this route by: its name and what decides its answers
   * (targets and output cap), so a changed config never serves an answer of the old one.
   */
  readonly cacheScope: string;
}
