import type { Breaker } from '../../circuit-breaker';
import type { LlmTargetConfig } from '../../config';
import type { RetryPolicy } from '../../dispatch';
import type { LlmProvider, ProviderTarget } from '../providers/llm-provider';
import type { Price } from '../pricing';

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
}

/** A route of `llm.routes`: what a client names as `model`. */
export interface LlmRoute {
  readonly name: string;
  readonly lane: string;
  readonly targets: readonly LlmTarget[];
  /** Per target. */
  readonly retry: RetryPolicy;
  /** Every attempt and wait of one request, across every target. */
  readonly deadlineMs: number;
  /** Output cap when the client sets none. */
  readonly maxOutputTokens: number;
  readonly cache: boolean;
  /**
   * What the exact cache keys answers of this route by: its name and what decides its answers
   * (targets and output cap), so a changed config never serves an answer of the old one.
   */
  readonly cacheScope: string;
}
