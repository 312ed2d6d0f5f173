import type { Clock, Random, ResilienceError } from '../common';
import type { RetryBudget, RetryContext } from '../retry';
import type { ToolDefinition } from './tool';

/** A tool call as its retry policy sees it: made at the call's first failure, kept for the rest. */
export class ToolRetryContext implements RetryContext {
  attempts = 0;
  readonly idempotent: boolean;
  readonly budget: RetryBudget;

  constructor(
    private readonly tool: ToolDefinition,
    private readonly tenant: string,
    readonly deadlineAt: number,
    /** The call's attempt timeout: a retry starts only if the whole of it fits. */
    readonly attemptMs: number,
    readonly clock: Clock,
    readonly random: Random,
  ) {
    this.idempotent = tool.idempotent;
    this.budget = tool.retryBudget;
  }

  breakerRefusal(): ResilienceError | undefined {
    // The caller's shorter timeout (X-Timeout-Ms) is its own: the breaker hears it as such.
    return this.tool.breaker.refusal(this.tenant, this.attemptMs < this.tool.timeoutMs);
  }
}
