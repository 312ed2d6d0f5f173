import type { Clock } from '../../common';
import { countedInputTokens, refusesCountingTokens } from '../wire';
import type { ProviderAttempt } from './llm-provider';
import { malformedAnswerError, type ProviderErrorAnswer, unsupportedRequestError } from './provider-errors';
import { postJson } from './provider-exchange';

/**
 * How long a model Bedrock said has no CountTokens is not asked again. Without it every
 * `count_tokens` of a route whose first target is such a model (Claude Code sends one per turn)
 * would wait for Bedrock's refusal before the estimate answers; AWS adds CountTokens to models
 * over time, so the refusal is asked again an hour later rather than believed until a restart.
 */
export const NO_COUNT_TOKENS_RECHECK_MS = 3_600_000;

/**
 * Bedrock's CountTokens for one provider's targets: the count of a signed request, and which
 * models refused to count (by model id, at most the route's few targets), each until
 * {@link NO_COUNT_TOKENS_RECHECK_MS} of the clock has passed.
 */
export class BedrockTokenCounter {
  private readonly refusedUntil = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  /**
   * The input tokens Bedrock counts in `body`, POSTed signed to `url`. Fails as `complete` does;
   * a model without CountTokens fails as `unsupported_request`, at once while it is remembered.
   */
  async count(attempt: ProviderAttempt, url: string, headers: Record<string, string>, body: object): Promise<number> {
    const { target } = attempt;
    const until = this.refusedUntil.get(target.model);
    if (until !== undefined && this.clock.now() < until) throw noCountTokens(target);
    const answer = await postJson(attempt, url, headers, body, this.clock, (refused) => this.refusal(attempt, refused));
    this.refusedUntil.delete(target.model);
    const counted = countedInputTokens(answer);
    if (counted === undefined) throw malformedAnswerError(target, 200);
    return counted;
  }

  private refusal({ target }: ProviderAttempt, { status, headers, body }: ProviderErrorAnswer) {
    if (!refusesCountingTokens(status, headers, body)) return undefined;
    this.refusedUntil.set(target.model, this.clock.now() + NO_COUNT_TOKENS_RECHECK_MS);
    return noCountTokens(target);
  }
}

function noCountTokens(target: ProviderAttempt['target']) {
  return unsupportedRequestError(target, 'its model has no CountTokens');
}
