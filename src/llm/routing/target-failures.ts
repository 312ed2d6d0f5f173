import { ResilienceError } from '../../common';
import { isProviderFailure, ProviderFailure } from '../providers/provider-errors';
import type { LlmTarget } from './llm-route';

/**
 * Each target's last failure in a request, in the order the targets were first tried, for the
 * answer when every target failed. The last failure alone hid the first ones: a local model
 * server refused by the egress policy, followed by a cloud target that was down, answered only
 * "unavailable" from the cloud. The message lists every target's label (provider/model), kind
 * and message, which the error kinds' own messages keep free of upstream bodies, URLs and keys.
 */
export class TargetFailures {
  private readonly byTarget = new Map<LlmTarget, ResilienceError>();

  /** Records `failure` as `target`'s latest; the target keeps its place in the order. */
  failed(target: LlmTarget, failure: ResilienceError): void {
    this.byTarget.set(target, failure);
  }

  /**
   * `last`, the request's answer, with a message naming every target's failure when more than one
   * target failed. Its kind, status, attempts and Retry-After stay the last failure's: what the
   * client may do next depends on the last target, the message only explains.
   */
  answer(last: ResilienceError): ResilienceError {
    if (this.byTarget.size < 2) return last;
    const each = [...this.byTarget].map(([target, failure]) => `${target.label} ${failure.kind} (${failure.message})`);
    return withMessage(last, `every target failed: ${each.join('; ')}`);
  }
}

/** The same failure, of the same class, with another message. */
function withMessage(error: ResilienceError, message: string): ResilienceError {
  const options = {
    attempts: error.attempts,
    retryAfterMs: error.retryAfterMs,
    status: error.status,
    cause: error.cause,
    retryable: error.retryable,
  };
  if (isProviderFailure(error)) {
    return new ProviderFailure(error.kind, error.code, message, { ...options, upstreamStatus: error.upstreamStatus });
  }
  return new ResilienceError(error.kind, message, options);
}
