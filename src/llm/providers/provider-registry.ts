import type { Clock } from '../../common';
import type { FakeStepConfig } from '../llm.options';
import { AnthropicProvider } from './anthropic.provider';
import { BedrockProvider } from './bedrock.provider';
import { FakeProvider } from './fake.provider';
import type { LlmProvider } from './llm-provider';
import { OpenAiProvider } from './openai.provider';

/** What building a provider needs of a target's config. */
export interface ProviderTargetConfig {
  readonly provider: string;
  readonly model: string;
  /** `fake` only. */
  readonly script?: readonly FakeStepConfig[];
}

/**
 * The provider of one target, by its `provider` name. Build one per target: a `fake` target's
 * script is counted per instance. Throws a RangeError for a provider Bulkhead does not speak
 * (the config schema lets none through).
 */
export function createProvider(target: ProviderTargetConfig, clock: Clock): LlmProvider {
  switch (target.provider) {
    case 'openai':
      return new OpenAiProvider(clock);
    case 'anthropic':
      return new AnthropicProvider(clock);
    case 'bedrock':
      return new BedrockProvider(clock);
    case 'fake':
      return new FakeProvider(target.script, clock);
    default:
      throw new RangeError(`llm provider '${target.provider}' is not supported (openai, anthropic, bedrock, fake)`);
  }
}

/** The providers of every route's targets, built once: "the provider of target i of route r". */
export class ProviderRegistry {
  private readonly routes = new Map<string, readonly LlmProvider[]>();

  constructor(routes: Readonly<Record<string, { readonly targets: readonly ProviderTargetConfig[] }>>, clock: Clock) {
    for (const [name, route] of Object.entries(routes)) {
      this.routes.set(
        name,
        route.targets.map((target) => createProvider(target, clock)),
      );
    }
  }

  /** Throws a RangeError for a route or target the config does not have. */
  get(route: string, index: number): LlmProvider {
    const provider = this.routes.get(route)?.[index];
    if (!provider) throw new RangeError(`llm route '${route}' has no target ${index}`);
    return provider;
  }
}
