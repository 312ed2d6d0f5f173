import type { Clock, Random, ResilienceError } from '../../common';
import type { RetryBudget, RetryContext } from '../../retry';
import type { LlmTarget } from './llm-route';

/**
 * An LLM request's attempts on its current target as the route's retry policy sees them: one
 * object per request, made at its first failure, pointed at each target in turn.
 */
export class TargetRetryContext implements RetryContext {
  /** Attempts on the current target. */
  attempts = 0;
  /**
   * A completion may run twice: nothing of it reached the client before its commit point, and a
   * provider bills each request it answers anyway. So `timeout` is retried, as the table says of
   * idempotent work.
   */
  readonly idempotent = true;
  /** Each attempt is bounded by what is left of the deadline: a retry needs only time left. */
  readonly attemptMs = 0;
  budget: RetryBudget | undefined = undefined;
  private target!: LlmTarget;

  constructor(
    readonly clock: Clock,
    readonly random: Random,
    readonly deadlineAt: number,
    private readonly tenant: string | undefined,
  ) {}

  /** Points the context at `target`, after `attempts` attempts there. */
  on(target: LlmTarget, attempts: number): this {
    this.target = target;
    this.attempts = attempts;
    this.budget = target.retryBudget;
    return this;
  }

  breakerRefusal(): ResilienceError | undefined {
    return this.target.breaker.refusal(this.tenant);
  }
}
