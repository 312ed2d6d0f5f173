import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { CLOCK, type Clock, RANDOM, type Random } from '../common';
import { ToolAttemptWrappers } from '../dispatch';
import { type LlmProvider, LlmProviderWrappers, type WrappedTarget } from '../llm';
import { ChaosDecider } from './chaos-decider';
import type { ChaosInjection } from './chaos-injection';
import { CHAOS_MODULE_OPTIONS, type ChaosModuleOptions } from './chaos.module-definition';
import { ChaosProvider, type LlmFaultKind } from './chaos.provider';
import { ToolChaos } from './tool-chaos';

/**
 * The chaos of every tool and LLM target, built once at start-up on the injected clock and
 * random source, and what it injected, for whoever listens (metrics, the ledger). While
 * `enabled` is false it holds nothing, and every provider it is given comes back unwrapped:
 * the call path does not change at all. It is the tools' and the LLM routes' wrappers
 * (ChaosModule provides it as both seams), so neither imports chaos.
 */
@Injectable()
export class ChaosRegistry implements ToolAttemptWrappers, LlmProviderWrappers, OnApplicationBootstrap {
  private readonly logger = new Logger('Bulkhead');
  private readonly tools = new Map<string, ToolChaos>();
  private readonly targets: string[] = [];
  private listeners: Array<(injection: ChaosInjection) => void> = [];
  // An arrow: the tools' and targets' chaos call it as a plain function.
  private readonly report = (injection: ChaosInjection): void => {
    for (const listener of this.listeners) listener(injection);
  };
  readonly enabled: boolean;

  constructor(
    @Inject(CHAOS_MODULE_OPTIONS) options: ChaosModuleOptions,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RANDOM) private readonly random: Random,
  ) {
    this.enabled = options.enabled === true;
    if (!this.enabled) return;
    for (const [toolId, settings] of Object.entries(options.tools ?? {})) {
      const decider = new ChaosDecider(settings, random);
      if (decider.active) this.tools.set(toolId, new ToolChaos(toolId, decider, clock, this.report));
    }
  }

  /** Whether any tool's attempts may be touched: only then does the attempt runner ask. */
  get touchesTools(): boolean {
    return this.tools.size > 0;
  }

  /** The chaos of a tool's attempts; undefined when it has none (or chaos is off). */
  forTool(toolId: string): ToolChaos | undefined {
    return this.tools.get(toolId);
  }

  /**
   * An LLM target's provider: wrapped in its chaos when chaos is on and its settings
   * (`chaos` of the target) can inject anything, as it is otherwise.
   */
  wrap(provider: LlmProvider, target: WrappedTarget): LlmProvider {
    const settings = target.config.chaos;
    if (!this.enabled || !settings) return provider;
    const decider = new ChaosDecider<LlmFaultKind>(settings, this.random);
    if (!decider.active) return provider;
    const name = `llm.${target.route}/${target.label}`;
    this.targets.push(name);
    const where = { name, lane: target.lane, retryAfterMs: settings.retryAfterMs, audience: target.audience };
    return new ChaosProvider(provider, where, decider, this.clock, this.report);
  }

  /** Calls `listener` for every fault and delay injected, as it is; returns its disposer. */
  onInjected(listener: (injection: ChaosInjection) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((item) => item !== listener);
    };
  }

  /** Said once every target has been built, so that nobody mistakes a rehearsal for an outage. */
  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    const touched = [...this.tools.keys(), ...this.targets];
    this.logger.warn(
      touched.length === 0
        ? 'chaos is enabled, but no tool or LLM target has chaos settings: nothing is injected'
        : `chaos is enabled: faults and latency are injected on purpose into ${touched.join(', ')}`,
    );
  }
}
