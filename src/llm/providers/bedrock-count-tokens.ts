import type { Clock } from '../../common';
import { countedInputTokens, refusesCountingTokens } from '../wire';
import type { ProviderAttempt } from './llm-provider';
import {
  malformedAnswerError,
  type ProviderErrorAnswer,
  type ProviderFailure,
  unsupportedRequestError,
} from './provider-errors';

/**
 * How long a model Bedrock said has no CountTokens is not asked again. Without it every
 * `count_tokens` of a route whose first target is such a model (Claude Code sends one per turn)
 * would wait for Bedrock's refusal before the estimate answers; AWS adds CountTokens to models
 * over time, so the refusal is asked again an hour later rather than believed until a restart.
 */
export const NO_COUNT_TOKENS_RECHECK_MS = 3_600_000;

/** The geographies of Bedrock's cross-region inference profiles: `us.anthropic.claude-…`. */
const PROFILE_PREFIX = /^(?:us|us-gov|eu|apac|ap|jp|au|ca|global)\.(?=[a-z0-9-]+\.)/;

/**
 * The model ids to count with, in order: the target's own, then for a cross-region inference
 * profile (`us.anthropic.claude-sonnet-4-5-…`) its foundation model's (`anthropic.claude-…`).
 * Newer Claude models on Bedrock are invoked only through a profile, while CountTokens has been
 * seen to refuse the profile's id as a model without CountTokens and count the foundation
 * model's; the same tokenizer counts either.
 */
export function countTokensModelIds(model: string): string[] {
  const foundation = model.replace(PROFILE_PREFIX, '');
  return foundation === model ? [model] : [model, foundation];
}

/** One signed CountTokens POST for `modelId`, its non-2xx answers read by `refusal` first. */
export type CountTokensPost = (
  modelId: string,
  refusal: (answer: ProviderErrorAnswer) => ProviderFailure | undefined,
) => Promise<unknown>;

/**
 * Bedrock's CountTokens for one provider's targets: the count, asked with the first of
 * {@link countTokensModelIds} Bedrock counts with (remembered once found), and which models have
 * no CountTokens by any id, each until {@link NO_COUNT_TOKENS_RECHECK_MS} of the clock has
 * passed. Both maps are keyed by a configured model id: a route's few targets at most.
 */
export class BedrockTokenCounter {
  private readonly countsWith = new Map<string, string>();
  private readonly refusedUntil = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  /**
   * The input tokens Bedrock counts for the attempt's request. Fails as `complete` does; a model
   * without CountTokens fails as `unsupported_request`, at once while that is remembered.
   */
  async count(attempt: ProviderAttempt, post: CountTokensPost): Promise<number> {
    const { target } = attempt;
    const until = this.refusedUntil.get(target.model);
    if (until !== undefined && this.clock.now() < until) throw noCountTokens(target);
    const known = this.countsWith.get(target.model);
    // One failure object for this count: what the refusal reader hands postJson to throw.
    const refused = noCountTokens(target);
    for (const modelId of known ? [known] : countTokensModelIds(target.model)) {
      const answer = await post(modelId, ({ status, headers, body }) =>
        refusesCountingTokens(status, headers, body) ? refused : undefined,
      ).catch((error: unknown) => {
        if (error === refused) return REFUSED;
        throw error;
      });
      if (answer === REFUSED) continue;
      this.countsWith.set(target.model, modelId);
      const counted = countedInputTokens(answer);
      if (counted === undefined) throw malformedAnswerError(target, 200);
      return counted;
    }
    this.countsWith.delete(target.model);
    this.refusedUntil.set(target.model, this.clock.now() + NO_COUNT_TOKENS_RECHECK_MS);
    throw refused;
  }
}

/** Marks an id Bedrock refused to count with: the next one is tried. */
const REFUSED = Symbol('refused');

function noCountTokens(target: ProviderAttempt['target']): ProviderFailure {
  return unsupportedRequestError(target, 'its model has no CountTokens');
}
