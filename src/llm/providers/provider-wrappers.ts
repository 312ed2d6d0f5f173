import type { Audience } from '../../common';
import type { LlmTargetConfig } from '../llm.options';
import type { LlmProvider } from './llm-provider';

/** An LLM target, as a wrapper of its provider sees it. */
export interface WrappedTarget {
  readonly route: string;
  /** `provider/model`. */
  readonly label: string;
  /** The route's lane. */
  readonly lane: string;
  /** The target's settings, as configured. */
  readonly config: LlmTargetConfig;
  /** Who may use the route, so who may see what happens to its targets (its `tenants`). */
  readonly audience: Audience;
}

/**
 * The seam around LLM targets' providers, for a module that wraps them from outside (ChaosModule
 * provides it, so the LLM routes never import chaos). Without a provider, targets call theirs as
 * they are.
 */
export abstract class LlmProviderWrappers {
  /** The provider the route calls for `target`: `provider` itself, or one put around it. */
  abstract wrap(provider: LlmProvider, target: WrappedTarget): LlmProvider;
}
